/**
 * The harness's choice of NATS server, every branch of it, without Docker or a missing binary:
 * the facts are given, not probed.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import semver from "semver";
import { describe, expect, it } from "vitest";
import {
  CONTAINER_NODE_RANGE,
  NatsBackend,
  NoNatsBackendError,
  chooseNatsBackend,
  findDockerEndpoint,
  type NatsBackendFacts,
} from "../../../harness/nats-backend.js";

const none: NatsBackendFacts = { natsUrlEnv: undefined, natsServerOnPath: false, dockerAvailable: false, nodeVersion: "v24.21.0" };

describe("chooseNatsBackend", () => {
  it("prefers NATS_URL, then a nats-server on PATH, then the container", () => {
    const all = { ...none, natsUrlEnv: "nats://127.0.0.1:4222", natsServerOnPath: true, dockerAvailable: true };
    expect(chooseNatsBackend(all)).toBe(NatsBackend.external);
    expect(chooseNatsBackend({ ...all, natsUrlEnv: undefined })).toBe(NatsBackend.process);
    expect(chooseNatsBackend({ ...all, natsUrlEnv: undefined, natsServerOnPath: false })).toBe(NatsBackend.container);
  });

  it("keeps using the binary on PATH whether or not Docker is there", () => {
    expect(chooseNatsBackend({ ...none, natsServerOnPath: true })).toBe(NatsBackend.process);
    expect(chooseNatsBackend({ ...none, natsServerOnPath: true, dockerAvailable: true })).toBe(NatsBackend.process);
  });

  it("takes a blank NATS_URL for an unset one", () => {
    expect(chooseNatsBackend({ ...none, natsUrlEnv: "  ", natsServerOnPath: true })).toBe(NatsBackend.process);
  });

  it("says what to install or set when there is nothing at all", () => {
    expect(() => chooseNatsBackend(none)).toThrow(NoNatsBackendError);
    expect(() => chooseNatsBackend(none)).toThrow(/NATS_URL is not set, no nats-server binary is on PATH, and no Docker engine/);
    expect(() => chooseNatsBackend(none)).toThrow(/apt-get install nats-server/);
  });

  it("gives a test that configures, restarts or clusters its server the binary, or a reason", () => {
    const own = { ...none, needsOwnServer: true, natsUrlEnv: "nats://127.0.0.1:4222", dockerAvailable: true };
    expect(chooseNatsBackend({ ...own, natsServerOnPath: true })).toBe(NatsBackend.process);
    expect(() => chooseNatsBackend(own)).toThrow(/needs the nats-server binary on PATH \(NATS_URL and the nats:2\.11 container cannot/);
  });

  it("refuses the container on a Node that testcontainers does not run on, naming both versions", () => {
    const docker = { ...none, dockerAvailable: true };
    expect(chooseNatsBackend({ ...docker, nodeVersion: "v22.22.0" })).toBe(NatsBackend.container);
    expect(() => chooseNatsBackend({ ...docker, nodeVersion: "v20.20.2" })).toThrow(/needs Node >= 22\.22 .* this is v20\.20\.2/);
  });

  it("knows the Node range of the testcontainers version installed", () => {
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(readFileSync(require.resolve("testcontainers/package.json"), "utf8")) as { engines: { node: string } };
    expect(semver.validRange(CONTAINER_NODE_RANGE)).toBe(semver.validRange(pkg.engines.node));
  });
});

describe("findDockerEndpoint", () => {
  const probe = (env: NodeJS.ProcessEnv, present: string[] = []) => ({ env, home: "/home/u", uid: 1000, exists: (p: string) => present.includes(p) });

  it("finds nothing on a machine with only the docker client", () => {
    expect(findDockerEndpoint(probe({}))).toBeNull();
  });

  it("takes DOCKER_HOST first, then testcontainers' properties file, then the sockets in testcontainers' order", () => {
    expect(findDockerEndpoint(probe({ DOCKER_HOST: "tcp://127.0.0.1:2375" }, ["/var/run/docker.sock"]))).toBe("tcp://127.0.0.1:2375");
    expect(findDockerEndpoint(probe({}, ["/home/u/.testcontainers.properties", "/var/run/docker.sock"]))).toBe("/home/u/.testcontainers.properties");
    expect(findDockerEndpoint(probe({}, ["/var/run/docker.sock", "/run/user/1000/docker.sock"]))).toBe("/var/run/docker.sock");
    expect(findDockerEndpoint(probe({ XDG_RUNTIME_DIR: "/run/x" }, ["/run/x/docker.sock"]))).toBe("/run/x/docker.sock");
    expect(findDockerEndpoint(probe({}, ["/home/u/.docker/run/docker.sock"]))).toBe("/home/u/.docker/run/docker.sock");
    expect(findDockerEndpoint(probe({}, ["/run/user/1000/docker.sock"]))).toBe("/run/user/1000/docker.sock");
  });
});

describe("the container backend's module", () => {
  // Loading it proves testcontainers is installed and type-checked code imports it; starting a
  // container needs a Docker engine, which CI does not have.
  // On a Node testcontainers does not support (20), the harness never imports it: the choice
  // itself says so (tested above); here, that the module loads where it is supported.
  it(`loads with testcontainers on Node ${CONTAINER_NODE_RANGE}, and is not loaded on older ones`, async () => {
    if (!semver.satisfies(process.version, CONTAINER_NODE_RANGE)) {
      expect(() => chooseNatsBackend({ natsUrlEnv: undefined, natsServerOnPath: false, dockerAvailable: true, nodeVersion: process.version, needsOwnServer: false })).toThrow(/Node/);
      return;
    }
    const mod = await import("../../../harness/nats-container.js");
    expect(typeof mod.startNatsContainer).toBe("function");
  });
});
