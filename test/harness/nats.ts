/**
 * The one way tests get a NATS server. In order of preference: NATS_URL (an existing
 * server the suite does not own), a nats-server binary on PATH (full control: kill,
 * restart, clusters), or the official image through testcontainers when Docker is all
 * there is.
 */
import {
  findNatsServerBinary,
  startNatsServer,
  type NatsServerOptions,
} from "../../src/adapters/nats/nats-server-process.js";
import {
  startNatsCluster,
  type NatsClusterHandle,
  type NatsClusterOptions,
} from "../../src/adapters/nats/nats-cluster.js";

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

const NO_SERVER =
  "No nats-server binary on PATH and the `testcontainers` package is not installed. Install " +
  "nats-server (https://github.com/nats-io/nats-server/releases or " +
  "`go install github.com/nats-io/nats-server/v2@latest`), or `npm i -D testcontainers` with " +
  "a Docker engine running, or set NATS_URL to an existing server.";

export async function withNatsServer(opts: NatsServerOptions = {}): Promise<NatsTestServer> {
  const external = process.env.NATS_URL;
  if (external) return externalServer(external);
  const binary = findNatsServerBinary(opts.binary ?? "nats-server");
  if (binary) return Object.assign(await startNatsServer({ ...opts, binary }), { canRestart: true });
  return containerServer(opts);
}

/** Clusters need real processes; there is no NATS_URL or container fallback. */
export async function withNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const binary = findNatsServerBinary(opts.binary ?? "nats-server");
  if (!binary) throw new Error(`A NATS cluster needs the nats-server binary. ${NO_SERVER}`);
  return startNatsCluster({ ...opts, binary });
}

/** True when kill/restart/cluster tests can run here. */
export function canControlNatsServers(): boolean {
  return !process.env.NATS_URL && findNatsServerBinary() !== null;
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

// Just the slice of the testcontainers API used here; the package is optional.
interface StartedContainer {
  getHost(): string;
  getMappedPort(port: number): number;
  stop(): Promise<unknown>;
  logs(): Promise<NodeJS.ReadableStream>;
}
interface Container {
  withCommand(command: string[]): Container;
  withExposedPorts(...ports: number[]): Container;
  withWaitStrategy(strategy: unknown): Container;
  start(): Promise<StartedContainer>;
}
interface Testcontainers {
  GenericContainer: new (image: string) => Container;
  Wait: { forLogMessage(message: string | RegExp): unknown };
}

async function containerServer(opts: NatsServerOptions): Promise<NatsTestServer> {
  if (opts.configText || opts.clusterPort !== undefined || opts.routes?.length) {
    throw new Error(`This test needs a configured nats-server binary. ${NO_SERVER}`);
  }
  let tc: Testcontainers;
  try {
    // A variable specifier keeps TypeScript from requiring the optional package.
    const specifier = "testcontainers";
    tc = (await import(specifier)) as Testcontainers;
  } catch {
    throw new Error(NO_SERVER);
  }
  let started: StartedContainer;
  try {
    started = await new tc.GenericContainer("nats:2.11")
      .withCommand(opts.jetstream === false ? [] : ["-js"])
      .withExposedPorts(4222)
      .withWaitStrategy(tc.Wait.forLogMessage(/Server is ready/))
      .start();
  } catch (err) {
    throw new Error(`Could not start the nats:2.11 container (is Docker running?). ${NO_SERVER}`, { cause: err });
  }
  const tail: string[] = [];
  (await started.logs()).on("data", (chunk: Buffer | string) => {
    tail.push(...String(chunk).split("\n").filter(Boolean));
    if (tail.length > 200) tail.splice(0, tail.length - 200);
  });
  const port = started.getMappedPort(4222);
  const unsupported = (what: string) => () =>
    Promise.reject(new Error(`${what}() is not supported with the container fallback; install nats-server`));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await started.stop();
  };
  return {
    url: `nats://${started.getHost()}:${port}`,
    port,
    canRestart: false,
    logs: () => tail.join("\n"),
    stop,
    // A restarted container may get another host port, so clients could not reconnect.
    kill: unsupported("kill"),
    restart: unsupported("restart"),
    [Symbol.asyncDispose]: stop,
  };
}
