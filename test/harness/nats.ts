/**
 * The one way tests get a NATS server. In order of preference (chooseNatsBackend in
 * nats-backend.ts): NATS_URL (an existing server the suite does not own), a nats-server
 * binary on PATH (full control: kill, restart, config, clusters), or the official image
 * through testcontainers when Docker is all there is.
 */
import { execFileSync } from "node:child_process";
import semver from "semver";
import {
  findNatsServerBinary,
  startNatsServer,
  type NatsServerOptions,
} from "../../src/adapters/nats/nats-server-process.js";
import { NatsBackend, chooseNatsBackend, findDockerEndpoint, type NatsBackendFacts } from "./nats-backend.js";
import { startNatsCluster, type NatsClusterHandle, type NatsClusterOptions } from "./nats-cluster.js";

export interface NatsTestServer extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  /** False for NATS_URL and the container: fault tests use it to skip themselves. */
  readonly canRestart: boolean;
  logs(): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

export async function withNatsServer(opts: NatsServerOptions = {}): Promise<NatsTestServer> {
  assertRequestedBinaryExists();
  const needsOwnServer = Boolean(opts.configText || opts.clusterPort !== undefined || opts.routes?.length);
  const binary = findNatsServerBinary(opts.binary);
  const backend = chooseNatsBackend(facts({ natsServerOnPath: binary !== null, needsOwnServer }));
  switch (backend) {
    case NatsBackend.external:
      return externalServer(process.env.NATS_URL!);
    case NatsBackend.process:
      return Object.assign(await startNatsServer({ ...opts, binary: binary! }), { canRestart: true });
    case NatsBackend.container: {
      const { startNatsContainer } = await import("./nats-container.js");
      return startNatsContainer({ jetstream: opts.jetstream ?? true });
    }
  }
}

/** Clusters need real processes; there is no NATS_URL or container fallback. */
export async function withNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  assertRequestedBinaryExists();
  const binary = findNatsServerBinary(opts.binary);
  // Throws the explanation when there is no binary; with one, the answer is always "process".
  chooseNatsBackend(facts({ natsServerOnPath: binary !== null, needsOwnServer: true }));
  return startNatsCluster({ ...opts, binary: binary! });
}

/** nats-server 2.10 added the stream sources with subject transforms regional mode is built on. */
const REGIONS_FLOOR = "2.10.0";
let regionsSupported: boolean | undefined;

/**
 * True when the nats-server these tests start supports regional mode. CI also runs the suites
 * on Debian's 2.9.10, where regional mode is refused by design: regions-server-version.test.ts
 * checks that refusal there, and the regional tests run on the current server.
 */
export function serverSupportsRegions(): boolean {
  if (regionsSupported !== undefined) return regionsSupported;
  const binary = findNatsServerBinary();
  const version = binary === null ? null : /v?(\d+\.\d+\.\d+)/.exec(execFileSync(binary, ["--version"], { encoding: "utf8" }))?.[1];
  regionsSupported = version != null && semver.gte(version, REGIONS_FLOOR);
  return regionsSupported;
}

/** True when kill/restart/cluster tests can run here. */
export function canControlNatsServers(): boolean {
  assertRequestedBinaryExists();
  return !process.env.NATS_URL && findNatsServerBinary() !== null;
}

/**
 * A NATS_SERVER_BIN that names no executable is a mistake in the run, not a machine without a
 * server: fail loudly rather than fall back to another version or skip the fault tests.
 */
function assertRequestedBinaryExists(): void {
  const requested = process.env.NATS_SERVER_BIN?.trim();
  if (requested && findNatsServerBinary(requested) === null) {
    throw new Error(`NATS_SERVER_BIN=${requested} is not an executable file (scripts/install-nats.sh prints the right path)`);
  }
}

function facts(known: Pick<NatsBackendFacts, "natsServerOnPath" | "needsOwnServer">): NatsBackendFacts {
  return {
    ...known,
    natsUrlEnv: process.env.NATS_URL,
    dockerAvailable: findDockerEndpoint() !== null,
    nodeVersion: process.version,
  };
}

function externalServer(url: string): NatsTestServer {
  const first = url.split(",")[0] ?? url;
  const parsed = new URL(first.includes("://") ? first : `nats://${first}`);
  const unsupported = (what: string) => () =>
    Promise.reject(new Error(`${what}() is not supported with NATS_URL: the suite does not own ${url}`));
  return {
    url,
    port: Number(parsed.port || 4222),
    canRestart: false,
    logs: () => `(server at NATS_URL=${url} is external; no logs)`,
    stop: () => Promise.resolve(),
    kill: unsupported("kill"),
    restart: unsupported("restart"),
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}
