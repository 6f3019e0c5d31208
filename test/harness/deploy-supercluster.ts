/**
 * The three-region supercluster of deploy/nats/regions/ and deploy/regions/docker-compose.yml,
 * started on loopback as the files describe it: every node a compose service runs, each with its
 * region's config and its name in NATS_SERVER_NAME. Only what loopback needs is rewritten, in a
 * temporary copy of deploy/nats: the listen addresses and the host names of the routes and
 * gateways (compose service names) become loopback ports, and the JetStream store directory a
 * temporary one. Clusters, gateways, JetStream limits, fsync policy and the users and their
 * permissions stay as written.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { distinctFreePorts } from "./ports.js";
import { waitFor } from "./wait.js";

const DEPLOY = new URL("../../deploy/", import.meta.url);
/** The ports the configs listen on, in the order a node's loopback ports are picked. */
const LISTENS = { client: 4222, cluster: 6222, gateway: 7222, http: 8222 } as const;
type PortName = keyof typeof LISTENS;

type Json = Record<string, any>;

// Servers still running when Node exits would outlive the test that owns them.
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of live) c.kill("SIGKILL");
});

/** The compose file of the three regions, parsed (merge keys on, as compose reads them). */
export function regionsCompose(): { services: Record<string, Json> } {
  return parse(readFileSync(new URL("regions/docker-compose.yml", DEPLOY), "utf8"), { merge: true }) as { services: Record<string, Json> };
}

/** A compose service's environment, values as strings. */
export const serviceEnv = (service: Json): Record<string, string> =>
  Object.fromEntries(Object.entries(service["environment"] ?? {}).map(([k, v]) => [k, String(v)]));

export type DeployNode = { name: string; region: string; config: string; ports: Record<PortName, number> };

/** The NATS services of the compose file: name, region and config file, in file order. */
export function composeNatsNodes(): Array<Omit<DeployNode, "ports">> {
  return Object.entries(regionsCompose().services)
    .filter(([, s]) => String(s["image"]).startsWith("nats:"))
    .map(([name, s]) => {
      const config = String((s["command"] as string[])[1]);
      const region = /\/regions\/([^/]+)\.conf$/.exec(config)?.[1];
      if (region === undefined) throw new Error(`${name} runs ${config}, not a region's config`);
      return { name: serviceEnv(s)["NATS_SERVER_NAME"] ?? name, region, config };
    });
}

/** The config text a node runs on loopback: its region's file with addresses and paths rewritten. */
export function loopbackConfig(text: string, node: DeployNode, all: DeployNode[], storeDir: string): string {
  let out = text.replace('store_dir: "/data/jetstream"', `store_dir: ${JSON.stringify(storeDir)}`);
  for (const [name, port] of Object.entries(LISTENS) as Array<[PortName, number]>) {
    out = out.replace(`listen: "0.0.0.0:${port}"`, `listen: "127.0.0.1:${node.ports[name]}"`).replace(`http: "0.0.0.0:${port}"`, `http: "127.0.0.1:${node.ports[name]}"`);
  }
  // Routes and gateway URLs name the compose services: user:password@nats-eu-2:6222.
  return out.replace(/@([a-z0-9-]+):(6222|7222)\b/g, (whole, host: string, port: string) => {
    const peer = all.find((n) => n.name === host);
    if (peer === undefined) throw new Error(`${node.region}'s config names ${host}, which compose does not run`);
    return `@127.0.0.1:${port === "6222" ? peer.ports.cluster : peer.ports.gateway}`;
  });
}

export interface DeploySupercluster extends AsyncDisposable {
  readonly nodes: DeployNode[];
  /** Client URLs of a region's nodes, comma-separated, in the order of the compose file. */
  url(region: string): string;
  /** The config file a node runs, in the temporary copy (for `nats-server -t`). */
  configFile(node: DeployNode): string;
  logs(): string;
  stop(): Promise<void>;
}

/** Starts every node of the compose file and waits until gateways link every region and JetStream has a meta leader. */
export async function startDeploySupercluster(binary: string, timeoutMs = 60_000): Promise<DeploySupercluster> {
  const listed = composeNatsNodes();
  const free = await distinctFreePorts(listed.length * 4);
  const nodes: DeployNode[] = listed.map((n, i) => ({ ...n, ports: { client: free[i * 4]!, cluster: free[i * 4 + 1]!, gateway: free[i * 4 + 2]!, http: free[i * 4 + 3]! } }));
  const dir = mkdtempSync(join(tmpdir(), "deploy-regions-"));
  // The whole deploy/nats tree, so each region's `include "./roles.conf"` resolves as in the image.
  cpSync(fileURLToPath(new URL("nats/", DEPLOY)), join(dir, "nats"), { recursive: true });
  const configFile = (n: DeployNode) => join(dir, "nats", "regions", `${n.name}.loopback.conf`);
  const children: ChildProcess[] = [];
  const tail: string[] = [];
  const stop = async () => {
    await Promise.all(children.map((c) => new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once("exit", () => resolve());
      c.kill("SIGKILL");
    })));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const n of nodes) {
      const text = readFileSync(join(dir, "nats", n.config.replace(/^\/etc\/nats\//, "")), "utf8");
      writeFileSync(configFile(n), loopbackConfig(text, n, nodes, join(dir, "store", n.name)));
      const child = spawn(binary, ["-c", configFile(n)], { env: { ...process.env, NATS_SERVER_NAME: n.name }, stdio: ["ignore", "pipe", "pipe"] });
      children.push(child);
      live.add(child);
      child.once("exit", () => live.delete(child));
      const keep = (b: Buffer) => void tail.push(...b.toString().split("\n").filter(Boolean).map((l) => `${n.name}: ${l}`).slice(-50));
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
    }
    let missing: string[] = [];
    await waitFor(
      async () => {
        missing = (await Promise.all(nodes.map((n) => missingLinks(n, nodes)))).filter((m) => m !== null);
        return missing.length === 0;
      },
      { timeoutMs, intervalMs: 250, message: "every node routed to its region, gatewayed to every other region, and seeing a JetStream meta leader" },
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${missing.join(" | ")}`);
    });
  } catch (err) {
    await stop();
    throw new Error(`${String(err)}\n${tail.filter((l) => /\[(WRN|ERR|FTL)\]/.test(l)).slice(-30).join("\n")}`);
  }
  return {
    nodes,
    url: (region) => nodes.filter((n) => n.region === region).map((n) => `nats://127.0.0.1:${n.ports.client}`).join(","),
    configFile,
    logs: () => tail.join("\n"),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** What the node's monitoring port says is missing: routes to its region's other nodes, a gateway to every other region (each node dials one of its own; which nodes a remote region dials is its choice), a meta leader; null when nothing is. */
async function missingLinks(node: DeployNode, all: DeployNode[]): Promise<string | null> {
  const get = async (path: string): Promise<Json | null> => {
    try {
      const res = await fetch(`http://127.0.0.1:${node.ports.http}${path}`);
      return res.ok ? ((await res.json()) as Json) : null;
    } catch {
      return null;
    }
  };
  const [routez, gatewayz, jsz] = await Promise.all([get("/routez"), get("/gatewayz"), get("/jsz")]);
  if (routez === null || gatewayz === null || jsz === null) return `${node.name}: no monitoring answer yet`;
  const routed = new Set(((routez["routes"] ?? []) as Json[]).map((r) => String(r["remote_name"])));
  const unrouted = all.filter((n) => n.region === node.region && n.name !== node.name && !routed.has(n.name)).map((n) => n.name);
  const outbound = Object.keys(gatewayz["outbound_gateways"] ?? {});
  const ungated = [...new Set(all.filter((n) => n.region !== node.region).map((n) => n.region))].filter((r) => !outbound.includes(r));
  const leader = jsz["meta_cluster"]?.["leader"];
  const missing = [
    ...(unrouted.length > 0 ? [`no route to ${unrouted.join(", ")}`] : []),
    ...(ungated.length > 0 ? [`no gateway to ${ungated.join(", ")}`] : []),
    ...(typeof leader === "string" && leader !== "" ? [] : ["no meta leader"]),
  ];
  return missing.length > 0 ? `${node.name}: ${missing.join("; ")}` : null;
}
