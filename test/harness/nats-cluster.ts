/**
 * A local N-node nats-server cluster with clustered JetStream, for the fault tests and the
 * harness's own tests; the service never starts a cluster, so this lives in test/. Every
 * node routes to every other, so any node can be killed and restarted (on the same ports
 * and store) and rejoin without a special seed.
 */
import { connect, type ConnectionOptions } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startNatsServer, type NatsServerHandle, type NatsServerOptions } from "../../src/adapters/nats/nats-server-process.js";
import { distinctFreePorts } from "./ports.js";

export interface NatsClusterOptions
  extends Omit<NatsServerOptions, "port" | "clusterPort" | "routes" | "serverName" | "storeDir" | "jetstream"> {
  size?: number;
  /** How long to wait for JetStream to elect a meta leader; 2.9 takes a few seconds. */
  metaLeaderTimeoutMs?: number;
  /** Credentials for the readiness probe when configText adds authorization. */
  connectOptions?: Omit<ConnectionOptions, "servers">;
}

export interface NatsClusterHandle extends AsyncDisposable {
  readonly nodes: NatsServerHandle[];
  readonly urls: string[];
  /** Polls every running node until JetStream answers there; use after restarts. */
  waitForMetaLeader(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const { size = 3, metaLeaderTimeoutMs = 30_000, connectOptions, ...serverOpts } = opts;
  const host = serverOpts.host ?? "127.0.0.1";
  const clusterName = serverOpts.clusterName ?? "registry";
  // nats-server reports the cluster port in its ports file too, but a full mesh needs
  // every route known before any node starts, so the ports are picked up front.
  const clusterPorts = await distinctFreePorts(size, host);
  const routes = clusterPorts.map((p) => `nats://${host}:${p}`);

  const started = await Promise.allSettled(
    clusterPorts.map((clusterPort, i) =>
      startNatsServer({ ...serverOpts, host, clusterName, clusterPort, routes, serverName: `${clusterName}-${i + 1}`, jetstream: true }),
    ),
  );
  const nodes = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failure = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failure) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw failure.reason;
  }

  const cluster: NatsClusterHandle = {
    nodes,
    urls: nodes.map((n) => n.url),
    waitForMetaLeader: (timeoutMs = metaLeaderTimeoutMs) => waitForMetaLeader(nodes, timeoutMs, connectOptions),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
    [Symbol.asyncDispose]: () => cluster.stop(),
  };
  try {
    await cluster.waitForMetaLeader();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

async function waitForMetaLeader(
  nodes: NatsServerHandle[],
  timeoutMs: number,
  connectOptions: Omit<ConnectionOptions, "servers"> = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (const node of nodes.filter((n) => n.running)) {
    for (;;) {
      try {
        // One short-lived connection per attempt, pinned to this node, so the answer
        // proves that this node (not just some node) sees the meta leader.
        const nc = await connect({ ...connectOptions, servers: node.url, reconnect: false, timeout: 1_000 });
        try {
          const jsm = await jetstreamManager(nc, { timeout: 1_000 });
          await jsm.getAccountInfo();
          break;
        } finally {
          await nc.close();
        }
      } catch (err) {
        lastError = err;
      }
      if (Date.now() > deadline) {
        const tails = nodes.map((n) => `--- ${n.url} ---\n${n.logs().split("\n").slice(-20).join("\n")}`);
        throw new Error(
          `JetStream had no meta leader within ${timeoutMs} ms (last error: ${String(lastError)}):\n${tails.join("\n")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
