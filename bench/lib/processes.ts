/**
 * The processes a benchmark runs: a nats-server, registry replicas (`agent-registry serve`,
 * compiled by build.ts), the bare responder of the lookup baseline, the MCP front, and the load process. Each is a separate OS process, so the load never shares the measured
 * process's event loop and /proc reads of one pid mean one thing.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  findNatsServerBinary,
  natsServerVersion,
  startNatsServer,
  type NatsServerHandle,
} from "../../src/adapters/nats/nats-server-process.js";
import { pickFreePort } from "../../test/harness/ports.js";
import { SERVICE_NODE_FLAGS } from "../../src/node-flags.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = ["--import", "tsx"];
/** Node flags that write a V8 CPU profile of the process into `cpuProfDir`, when given. */
const profFlags = (cpuProfDir: string | undefined): string[] => (cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : []);

export function natsBinary(): string {
  const binary = findNatsServerBinary();
  if (!binary) throw new Error("no nats-server on PATH: install it (Debian: apt-get install nats-server)");
  return binary;
}

export async function natsVersion(): Promise<string> {
  return (await natsServerVersion(natsBinary())) ?? "unknown";
}

/** A fresh nats-server with JetStream in its own temp dir, on a port it picks itself. */
export function startServer(): Promise<NatsServerHandle> {
  return startNatsServer({ binary: natsBinary(), jetstream: true, startTimeoutMs: 20_000 });
}

export type RegistryProc = {
  readonly pid: number;
  readonly httpPort: number;
  /** performance.now() when the process was spawned. */
  readonly spawnedAt: number;
  readonly logs: string[];
  /** ms from spawn until /readyz answered 200. */
  waitReady(timeoutMs?: number): Promise<number>;
  metrics(): Promise<string>;
  /** SIGTERM and wait (a CPU profile, when asked for, is written on this exit). */
  stop(): Promise<void>;
};

export type RegistryOptions = {
  natsUrl: string;
  env?: Record<string, string>;
  name?: string;
  cpuProfDir?: string | undefined;
  /** Node flags; the service's own (SERVICE_NODE_FLAGS) unless given, as deployed. */
  nodeArgs?: readonly string[];
  /** The compiled entry point to run (an A/B run starts two builds); build.ts's by default. */
  main?: string;
};

export async function startRegistry(opts: RegistryOptions): Promise<RegistryProc> {
  const httpPort = await pickFreePort();
  const prof = profFlags(opts.cpuProfDir);
  if (opts.cpuProfDir) mkdirSync(opts.cpuProfDir, { recursive: true });
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...prof, ...(opts.nodeArgs ?? SERVICE_NODE_FLAGS), opts.main ?? "bench/.build/dist/cli/main.js", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NATS_URL: opts.natsUrl,
      REGISTRY_EMBEDDED: "never",
      REGISTRY_HTTP_PORT: String(httpPort),
      REGISTRY_HTTP_HOST: "127.0.0.1",
      REGISTRY_REPLICA_NAME: opts.name ?? "bench",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs = keepLines(child);
  const exited = exitOf(child);
  const get = async (path: string): Promise<{ status: number; text: string }> => {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`);
    return { status: res.status, text: await res.text() };
  };
  return {
    pid: child.pid!,
    httpPort,
    spawnedAt,
    logs,
    async waitReady(timeoutMs = 60_000) {
      const deadline = performance.now() + timeoutMs;
      while (performance.now() < deadline) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`registry exited before it was ready:\n${logs.slice(-20).join("\n")}`);
        const status = await get("/readyz").then((r) => r.status).catch(() => 0);
        if (status === 200) return performance.now() - spawnedAt;
        await sleep(20);
      }
      throw new Error(`registry not ready within ${timeoutMs} ms:\n${logs.slice(-20).join("\n")}`);
    },
    metrics: async () => (await get("/metrics")).text,
    async stop() {
      await terminate(child, exited, 30_000);
    },
  };
}

export type ResponderProc = { readonly pid: number; stop(): Promise<void> };

/**
 * A helper process of 30 s to start at most, once a line of its output gives what `found`
 * looks for (its URL, or just that it is ready); its output is in the error if it never does.
 */
async function startUntilFound(what: string, args: readonly string[], env: NodeJS.ProcessEnv, found: (line: string) => string | undefined): Promise<{ pid: number; found: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const logs = keepLines(child);
  const exited = exitOf(child);
  const deadline = performance.now() + 30_000;
  let value: string | undefined;
  while ((value = logs.map(found).find((v) => v !== undefined)) === undefined) {
    if (child.exitCode !== null || performance.now() > deadline) throw new Error(`${what} did not start:\n${logs.join("\n")}`);
    await sleep(20);
  }
  return { pid: child.pid!, found: value, stop: () => terminate(child, exited, 5_000) };
}

/** The lookup baseline: a bare @nats-io/services endpoint replying with fixed bytes. */
export async function startBareResponder(natsUrl: string, subject: string, body: string, cpuProfDir?: string): Promise<ResponderProc> {
  const env = { NATS_URL: natsUrl, BARE_SUBJECT: subject, BARE_BODY: body };
  const proc = await startUntilFound("bare responder", [...profFlags(cpuProfDir), ...TSX, "bench/lib/bare-responder.ts"], env, (l) => (l === "ready" ? l : undefined));
  return { pid: proc.pid, stop: proc.stop };
}

export type McpProc = { readonly pid: number; readonly url: string; stop(): Promise<void> };

/** The MCP benchmark's floor: bench/lib/bare-http-front.ts, an HTTP to NATS lookup front with no MCP. */
export async function startBareHttpFront(natsUrl: string): Promise<McpProc> {
  const proc = await startUntilFound("the bare HTTP front", [...TSX, "bench/lib/bare-http-front.ts"], { NATS_URL: natsUrl }, (l) => /^url (http:\S+)$/.exec(l)?.[1]);
  return { pid: proc.pid, url: proc.found, stop: proc.stop };
}

/** `agent-registry mcp --http-port 0` from the compiled tree, once its log says where it listens. */
export async function startMcpHttp(natsUrl: string, cpuProfDir?: string, extraArgs: readonly string[] = []): Promise<McpProc> {
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const args = [...profFlags(cpuProfDir), "bench/.build/dist/cli/main.js", "mcp", "--http-port", "0", "--nats", natsUrl, ...extraArgs];
  const proc = await startUntilFound("the MCP server", args, {}, (l) => /"url":"(http:[^"]+)"/.exec(l)?.[1]);
  return { pid: proc.pid, url: proc.found, stop: proc.stop };
}

/** `agent-registry discovery --http-port 0` from the compiled tree, once its log says where it listens. */
export async function startDiscoveryHttp(natsUrl: string): Promise<McpProc> {
  const args = ["bench/.build/dist/cli/main.js", "discovery", "--http-port", "0", "--nats", natsUrl, "--publisher", "bench.example"];
  const proc = await startUntilFound("the discovery front", args, {}, (l) => /"url":"(http:[^"]+)"/.exec(l)?.[1]);
  return { pid: proc.pid, url: proc.found, stop: proc.stop };
}

export type LoadProc = {
  readonly pid: number;
  call<T>(cmd: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
};

/** The load process: bench/lib/load/worker.ts, driven over the IPC channel. */
export function startLoad(): LoadProc {
  const child = fork("bench/lib/load/worker.ts", [], { cwd: ROOT, execArgv: TSX, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = exitOf(child);
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.result);
    else p?.reject(new Error(`load process: ${m.error}`));
  });
  void exited.then(() => {
    for (const p of pending.values()) p.reject(new Error("the load process exited"));
    pending.clear();
  });
  return {
    pid: child.pid!,
    call<T>(cmd: string, args: Record<string, unknown> = {}) {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, cmd, args });
      });
    },
    stop: () => terminate(child, exited, 10_000),
  };
}

function keepLines(child: ChildProcess): string[] {
  const lines: string[] = [];
  const keep = (chunk: Buffer): void => {
    for (const line of chunk.toString().split("\n")) if (line.trim()) lines.push(line.trim());
    if (lines.length > 500) lines.splice(0, lines.length - 500);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return lines;
}

function exitOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

async function terminate(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const late = await Promise.race([exited.then(() => false), sleep(graceMs).then(() => true)]);
  if (late) {
    child.kill("SIGKILL");
    await exited;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
