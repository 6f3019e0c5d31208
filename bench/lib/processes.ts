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
  const prof = opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
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

/** The lookup baseline: a bare @nats-io/services endpoint replying with fixed bytes. */
export async function startBareResponder(natsUrl: string, subject: string, body: string, cpuProfDir?: string): Promise<ResponderProc> {
  const prof = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : [];
  const child = spawn(process.execPath, [...prof, ...TSX, "bench/lib/bare-responder.ts"], {
    cwd: ROOT,
    env: { ...process.env, NATS_URL: natsUrl, BARE_SUBJECT: subject, BARE_BODY: body },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs = keepLines(child);
  const exited = exitOf(child);
  const deadline = performance.now() + 30_000;
  while (!logs.includes("ready")) {
    if (child.exitCode !== null || performance.now() > deadline) throw new Error(`bare responder did not start:\n${logs.join("\n")}`);
    await sleep(20);
  }
  return { pid: child.pid!, stop: () => terminate(child, exited, 5_000) };
}

export type McpProc = { readonly pid: number; readonly url: string; stop(): Promise<void> };

/** The MCP benchmark's floor: bench/lib/bare-http-front.ts, an HTTP to NATS lookup front with no MCP. */
export async function startBareHttpFront(natsUrl: string): Promise<McpProc> {
  const child = spawn(process.execPath, [...TSX, "bench/lib/bare-http-front.ts"], {
    cwd: ROOT,
    env: { ...process.env, NATS_URL: natsUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs = keepLines(child);
  const exited = exitOf(child);
  const deadline = performance.now() + 30_000;
  let url: string | undefined;
  while ((url = logs.map((l) => /^url (http:\S+)$/.exec(l)?.[1]).find(Boolean)) === undefined) {
    if (child.exitCode !== null || performance.now() > deadline) throw new Error(`the bare HTTP front did not start:\n${logs.join("\n")}`);
    await sleep(20);
  }
  return { pid: child.pid!, url, stop: () => terminate(child, exited, 5_000) };
}

/** `agent-registry mcp --http-port 0` from the compiled tree, once its log says where it listens. */
export async function startMcpHttp(natsUrl: string, cpuProfDir?: string, extraArgs: readonly string[] = []): Promise<McpProc> {
  const prof = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : [];
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const child = spawn(process.execPath, [...prof, "bench/.build/dist/cli/main.js", "mcp", "--http-port", "0", "--nats", natsUrl, ...extraArgs], {
    cwd: ROOT,
    env: { ...process.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs = keepLines(child);
  const exited = exitOf(child);
  const deadline = performance.now() + 30_000;
  let url: string | undefined;
  while ((url = logs.map((l) => /"url":"(http:[^"]+)"/.exec(l)?.[1]).find(Boolean)) === undefined) {
    if (child.exitCode !== null || performance.now() > deadline) throw new Error(`the MCP server did not start:\n${logs.join("\n")}`);
    await sleep(20);
  }
  return { pid: child.pid!, url, stop: () => terminate(child, exited, 5_000) };
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
