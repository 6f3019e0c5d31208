/**
 * Which NATS server the tests get, decided from a few facts about the machine. The choice is a
 * pure function so that every branch, the Docker-only one included, is unit-tested on a
 * machine that has neither Docker nor a missing binary (test/unit/adapters/nats/nats-backend.test.ts).
 */
import { existsSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import semver from "semver";

export const NatsBackend = {
  /** NATS_URL: an existing server the suite does not own (no kill, restart or logs). */
  external: "external",
  /** A nats-server process from PATH: full control (kill, restart, config, clusters). */
  process: "process",
  /** The official nats:2.11 image with JetStream, through testcontainers. */
  container: "container",
} as const;
export type NatsBackend = (typeof NatsBackend)[keyof typeof NatsBackend];

export interface NatsBackendFacts {
  /** The NATS_URL environment variable, as found. */
  natsUrlEnv: string | undefined;
  natsServerOnPath: boolean;
  /** A Docker endpoint is configured or its socket exists (see findDockerEndpoint). */
  dockerAvailable: boolean;
  /** process.version; testcontainers 12.2 runs on Node 22.22 or newer only. */
  nodeVersion: string;
  /** The test writes the server's config, restarts it or clusters it: only a process can. */
  needsOwnServer?: boolean;
}

/** testcontainers' own `engines.node` (a unit test keeps the two equal across upgrades). */
export const CONTAINER_NODE_RANGE = ">= 22.22";
export const CONTAINER_IMAGE = "nats:2.11";

const INSTALL =
  "Install nats-server (Debian: `apt-get install nats-server`; or `eval \"$(scripts/install-nats.sh)\"`, " +
  "which builds the current server with Go and sets NATS_SERVER_BIN)";

/** Thrown when no backend fits; the message says what to install or set. */
export class NoNatsBackendError extends Error {
  override readonly name = "NoNatsBackendError";
}

export function chooseNatsBackend(facts: NatsBackendFacts): NatsBackend {
  if (facts.needsOwnServer) {
    if (facts.natsServerOnPath) return NatsBackend.process;
    throw new NoNatsBackendError(
      "This test configures, restarts or clusters its NATS servers, which needs the nats-server " +
        `binary on PATH (NATS_URL and the ${CONTAINER_IMAGE} container cannot do that). ${INSTALL}.`,
    );
  }
  if (facts.natsUrlEnv?.trim()) return NatsBackend.external;
  if (facts.natsServerOnPath) return NatsBackend.process;
  if (!facts.dockerAvailable) {
    throw new NoNatsBackendError(
      "No NATS server for the tests: NATS_URL is not set, no nats-server binary is on PATH, and " +
        "no Docker engine was found (DOCKER_HOST, ~/.testcontainers.properties or a docker.sock). " +
        `${INSTALL}, start a Docker engine for the ${CONTAINER_IMAGE} container, or set NATS_URL ` +
        "to an existing server with JetStream.",
    );
  }
  if (!semver.satisfies(facts.nodeVersion, CONTAINER_NODE_RANGE)) {
    throw new NoNatsBackendError(
      `No nats-server binary on PATH, and the ${CONTAINER_IMAGE} container fallback needs Node ` +
        `${CONTAINER_NODE_RANGE} (testcontainers' requirement) but this is ${facts.nodeVersion}. ` +
        `${INSTALL}, run the tests on Node 22 or 24, or set NATS_URL.`,
    );
  }
  return NatsBackend.container;
}

export interface DockerProbe {
  env: NodeJS.ProcessEnv;
  home: string;
  uid: number;
  exists(path: string): boolean;
}

/**
 * Where testcontainers would find a Docker engine, in its own order of places, or null. Only
 * a hint: a socket file can outlive its daemon, and then starting the container fails with
 * its own clear error.
 */
export function findDockerEndpoint(probe: DockerProbe = defaultProbe()): string | null {
  const { env, home, uid, exists } = probe;
  if (env["DOCKER_HOST"]) return env["DOCKER_HOST"];
  const properties = join(home, ".testcontainers.properties");
  if (exists(properties)) return properties;
  const sockets = [
    "/var/run/docker.sock",
    ...(env["XDG_RUNTIME_DIR"] ? [join(env["XDG_RUNTIME_DIR"], "docker.sock")] : []),
    join(home, ".docker", "run", "docker.sock"),
    join(home, ".docker", "desktop", "docker.sock"),
    join("/run", "user", String(uid), "docker.sock"),
  ];
  return sockets.find(exists) ?? null;
}

function defaultProbe(): DockerProbe {
  return { env: process.env, home: homedir(), uid: userInfo().uid, exists: existsSync };
}
