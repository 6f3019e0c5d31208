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
  /**
   * How many of the nodes start now (all by default); the others are in every node's routes
   * but start only with startRemaining(), as servers of a cluster still forming that join late.
   * A partial start does not wait for a meta leader: 2.9 elects one as soon as a quorum is up,
   * but newer servers (2.15 here) elect none at a cluster's first start until every node in
   * the routes has joined.
   */
  startNow?: number;
  /** How long to wait for JetStream to elect a meta leader; 2.9 takes a few seconds. */
  metaLeaderTimeoutMs?: number;
  /** Credentials for the readiness probe when configText adds authorization. */
  connectOptions?: Omit<ConnectionOptions, "servers">;
}

export interface NatsClusterHandle extends AsyncDisposable {
  readonly nodes: NatsServerHandle[];
  /** The client URLs of the nodes started so far. */
  readonly urls: string[];
  /** Starts the nodes `startNow` left out, and waits until each sees the meta leader. */
  startRemaining(): Promise<void>;
  /** Polls every running node until JetStream answers there; use after restarts. */
  waitForMetaLeader(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const { size = 3, startNow: startFirst = size, metaLeaderTimeoutMs = 30_000, connectOptions, ...serverOpts } = opts;
  const host = serverOpts.host ?? "127.0.0.1";
  const clusterName = serverOpts.clusterName ?? "registry";
  // nats-server reports the cluster port in its ports file too, but a full mesh needs
  // every route known before any node starts, so the ports are picked up front.
  const clusterPorts = await distinctFreePorts(size, host);
  const routes = clusterPorts.map((p) => `nats://${host}:${p}`);

  const startNode = (i: number) =>
    startNatsServer({ ...serverOpts, host, clusterName, clusterPort: clusterPorts[i]!, routes, serverName: `${clusterName}-${i + 1}`, jetstream: true });
  const nodes: NatsServerHandle[] = [];
  const startNodes = async (indexes: number[]) => {
    const started = await Promise.allSettled(indexes.map(startNode));
    nodes.push(...started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])));
    const failure = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failure) {
      await Promise.all(nodes.map((n) => n.stop()));
      throw failure.reason;
    }
  };
  await startNodes(Array.from({ length: Math.min(size, Math.max(1, startFirst)) }, (_, i) => i));

  const cluster: NatsClusterHandle = {
    nodes,
    get urls() {
      return nodes.map((n) => n.url);
    },
    startRemaining: async () => {
      await startNodes(Array.from({ length: size - nodes.length }, (_, i) => nodes.length + i));
      await cluster.waitForMetaLeader();
    },
    waitForMetaLeader: (timeoutMs = metaLeaderTimeoutMs) => waitForMetaLeader(nodes, timeoutMs, connectOptions),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
    [Symbol.asyncDispose]: () => cluster.stop(),
  };
  try {
    if (nodes.length === size) await cluster.waitForMetaLeader();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** Polls every running node until JetStream answers there (a meta leader is known). */
export async function waitForMetaLeader(
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
