/**
 * A NATS supercluster on loopback: one cluster per region (1..n nats-servers with JetStream,
 * the region's name as the cluster's name), the clusters joined by gateways, as a fleet in
 * several data centres runs it. Every server advertises a gateway proxy (gateway-proxy.ts) as
 * its gateway address, so every link between regions passes through one: cutting a region
 * off drops its links and refuses new ones while its servers, their clients and JetStream run
 * on, as in a real WAN partition; healing lets the gateways dial again.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { startGatewayProxy, type GatewayProxy } from "./gateway-proxy.js";
import { waitForMetaLeader } from "./nats-cluster.js";
import { distinctFreePorts } from "./ports.js";
import { waitFor } from "./wait.js";

export interface SuperclusterOptions {
  /** Region names, each also its NATS cluster's and gateway's name: ["eu", "us"] by default. */
  regions?: string[];
  /** nats-servers per region (1 keeps the machine light; 3 for a replicated region). */
  serversPerRegion?: number;
  /** A path or a name on PATH; NATS_SERVER_BIN or `nats-server` by default. */
  binary?: string;
  metaLeaderTimeoutMs?: number;
}

export interface Region {
  readonly name: string;
  readonly nodes: NatsServerHandle[];
  /** The client URLs of the region's servers, comma-separated, as a registry's NATS_URL. */
  readonly url: string;
}

export interface SuperclusterHandle extends AsyncDisposable {
  readonly regions: Record<string, Region>;
  readonly names: string[];
  /** Cuts `region` off every other region: the links to and from it drop and stay down. */
  isolate(region: string): void;
  /** Joins `region` again and waits until messages cross between every pair of joined regions. */
  heal(region: string): Promise<void>;
  /** Waits until a message published in each region reaches a subscriber in every other one. */
  waitForGateways(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

type Ports = { cluster: number; gateway: number };


export async function startSupercluster(opts: SuperclusterOptions = {}): Promise<SuperclusterHandle> {
  const { regions: names = ["eu", "us"], serversPerRegion = 1, metaLeaderTimeoutMs = 45_000 } = opts;
  const binary = findNatsServerBinary(opts.binary);
  if (binary === null) throw new Error("a supercluster needs the nats-server binary: set NATS_SERVER_BIN or put nats-server on PATH");
  const host = "127.0.0.1";
  // Every route and gateway must be known before any server starts, so the ports are picked up front.
  const free = await distinctFreePorts(names.length * serversPerRegion * 2, host);
  const ports = new Map<string, Ports[]>(
    names.map((name, r) => [
      name,
      Array.from({ length: serversPerRegion }, (_, i) => {
        const at = (r * serversPerRegion + i) * 2;
        return { cluster: free[at]!, gateway: free[at + 1]! };
      }),
    ]),
  );
  // One proxy per server's gateway port; the servers know each other only by the proxies.
  const proxies = new Map<string, GatewayProxy[]>();
  const closeProxies = () => Promise.all([...proxies.values()].flat().map((p) => p.close())).then(() => undefined);
  try {
    for (const name of names) proxies.set(name, await Promise.all(ports.get(name)!.map((p) => startGatewayProxy(p.gateway, host))));
  } catch (err) {
    await closeProxies();
    throw err;
  }
  const gatewayUrls = (name: string) => proxies.get(name)!.map((p) => `nats://${p.address}`);
  const gatewayBlock = (name: string, i: number): string => {
    const others = names.filter((n) => n !== name).map((n) => `    { name: ${JSON.stringify(n)}, urls: ${JSON.stringify(gatewayUrls(n))} }`);
    const own = ports.get(name)![i]!;
    const advertise = proxies.get(name)![i]!.address;
    return `gateway {\n  name: ${JSON.stringify(name)}\n  listen: "${host}:${own.gateway}"\n  advertise: "${advertise}"\n  gateways: [\n${others.join("\n")}\n  ]\n}`;
  };

  const regions: Record<string, Region> = {};
  const all: NatsServerHandle[] = [];
  const stopAll = () => Promise.all(all.map((n) => n.stop())).then(closeProxies);
  try {
    for (const name of names) {
      const own = ports.get(name)!;
      const routes = own.map((p) => `nats://${host}:${p.cluster}`);
      const nodes = await Promise.all(
        own.map((p, i) =>
          startNatsServer({ binary, host, jetstream: true, serverName: `${name}-${i + 1}`, clusterName: name, clusterPort: p.cluster, routes, configText: gatewayBlock(name, i) }).then((n) => {
            all.push(n);
            return n;
          }),
        ),
      );
      regions[name] = { name, nodes, url: nodes.map((n) => n.url).join(",") };
    }
  } catch (err) {
    await stopAll();
    throw err;
  }

  // Each proxy refuses the isolated regions, and an isolated region's proxies refuse everyone else.
  const isolated = new Set<string>();
  const applyCuts = () => {
    for (const [name, list] of proxies) {
      const refused = isolated.has(name) ? names.filter((n) => n !== name) : [...isolated];
      for (const p of list) p.setRefused(refused);
    }
  };
  const known = (name: string) => {
    if (!regions[name]) throw new Error(`no region ${name} in this supercluster (${names.join(", ")})`);
  };

  const handle: SuperclusterHandle = {
    regions,
    names,
    isolate: (name) => {
      known(name);
      isolated.add(name);
      applyCuts();
    },
    heal: async (name) => {
      known(name);
      isolated.delete(name);
      applyCuts();
      await handle.waitForGateways();
    },
    waitForGateways: (timeoutMs = metaLeaderTimeoutMs) => waitForGateways(names.filter((n) => !isolated.has(n)).map((n) => regions[n]!), timeoutMs),
    stop: stopAll,
    [Symbol.asyncDispose]: () => handle.stop(),
  };
  try {
    await handle.waitForGateways();
    await waitForMetaLeader(all, metaLeaderTimeoutMs);
  } catch (err) {
    await stopAll();
    throw err;
  }
  return handle;
}

/**
 * Gateways are up when interest crosses them: a subscriber in each region hears a publish made
 * in every other region. Publishes repeat until heard, as interest takes a moment to propagate.
 */
async function waitForGateways(regions: Region[], timeoutMs: number): Promise<void> {
  const conns: NatsConnection[] = [];
  try {
    for (const r of regions) conns.push(await connect({ servers: r.url.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 100 }));
    const subject = `_supercluster.probe.${Math.random().toString(36).slice(2)}`;
    const heard = regions.map(() => new Set<string>());
    conns.forEach((nc, i) => {
      nc.subscribe(`${subject}.${regions[i]!.name}`, { callback: (_err, msg) => void heard[i]!.add(msg.string()) });
    });
    await Promise.all(conns.map((nc) => nc.flush()));
    await waitFor(
      () => {
        conns.forEach((nc, from) => {
          for (const to of regions) if (to.name !== regions[from]!.name) nc.publish(`${subject}.${to.name}`, regions[from]!.name);
        });
        return heard.every((h) => h.size === regions.length - 1);
      },
      { timeoutMs, intervalMs: 100, message: "every region's gateways to pass messages" },
    );
  } finally {
    await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  }
}
