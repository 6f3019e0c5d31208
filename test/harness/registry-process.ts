/**
 * A registry replica as a separate OS process (`agent-registry serve` run from source with
 * tsx), for fault tests that kill -9 it: an in-process replica cannot die mid-write.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { pickFreePort } from "./ports.js";
import { waitFor } from "./wait.js";

/**
 * The command the kernel runs for a script with a `#!` line: the interpreter, then the rest of
 * the line as one argument (which `env -S` splits), then the script and its arguments.
 */
export function shebangCommand(script: string, args: string[]): [string, string[]] {
  const first = readFileSync(script, "utf8").split("\n", 1)[0] ?? "";
  const m = /^#!\s*(\S+)(?:\s+(.*))?$/.exec(first);
  if (!m) throw new Error(`${script} has no #! line`);
  return [m[1]!, [...(m[2] ? [m[2]] : []), script, ...args]];
}

export type RegistryProcess = {
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  readonly httpPort: number;
  readonly logs: string[];
  ready(): Promise<boolean>;
  metrics(): Promise<string>;
  kill(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * The environment of a replica process for a liveness fault test: names of its own derived
 * from `tag` (subjects, bucket, events stream), short heartbeat intervals allowed, a lease of
 * `leaseMs`, an eviction tick every 50 ms.
 */
export function livenessTestEnv(tag: string, natsUrl: string, leaseMs: number) {
  return {
    NATS_URL: natsUrl,
    REGISTRY_PREFIX: `${tag}.registry`,
    REGISTRY_BUCKET: `${tag}-registry`,
    REGISTRY_EVENTS_STREAM: `${tag.toUpperCase()}_EVENTS`,
    REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "100",
    REGISTRY_LEASE_MS: String(leaseMs),
    REGISTRY_EVICTION_TICK_MS: "50",
    LOG_LEVEL: "info",
  };
}

/**
 * `waitReady: false` returns as soon as the process runs (for tests of what happens before it is
 * ready); `main` runs another entry point, such as a built dist/cli/main.js, with plain node, or
 * with `asBin` as the installed `agent-registry` command runs: through its `#!` line.
 */
export async function spawnRegistry(name: string, env: Record<string, string>, opts: { waitReady?: boolean; main?: string; asBin?: boolean } = {}): Promise<RegistryProcess> {
  const httpPort = await pickFreePort();
  const logs: string[] = [];
  const [command, args] = opts.main && opts.asBin ? shebangCommand(opts.main, ["serve"]) : [process.execPath, opts.main ? [opts.main, "serve"] : ["--import", "tsx", "src/cli/main.ts", "serve"]];
  const child: ChildProcess = spawn(command, args, {
    env: { ...process.env, REGISTRY_EMBEDDED: "never", ...env, REGISTRY_HTTP_PORT: String(httpPort), REGISTRY_HTTP_HOST: "127.0.0.1", REGISTRY_REPLICA_NAME: name },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.trim()) logs.push(line);
    if (logs.length > 2000) logs.splice(0, logs.length - 2000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const get = async (path: string) => {
    // A connection per probe: the ops server closes a kept-alive connection idle for 5 s, and on a
    // loaded machine fetch's pool can pick such a socket as it closes ("other side closed").
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, { headers: { connection: "close" } });
    return { status: res.status, text: await res.text() };
  };
  const proc: RegistryProcess = {
    name,
    pid: child.pid!,
    exited,
    httpPort,
    logs,
    ready: async () => (await get("/readyz").catch(() => ({ status: 0 }))).status === 200,
    metrics: async () => (await get("/metrics")).text,
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  if (opts.waitReady === false) return proc;
  try {
    // Either it becomes ready, or it exits first (a bad configuration): never wait out the deadline.
    await Promise.race([
      waitFor(proc.ready, { timeoutMs: 30_000, intervalMs: 100, message: `replica ${name} ready` }),
      exited.then((code) => {
        throw new Error(`replica ${name} exited with code ${code} before it was ready`);
      }),
    ]);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`${(e as Error).message}\n${logs.slice(-30).join("\n")}`);
  }
  return proc;
}

/** Reads one metric's value (summed over its label sets) from Prometheus text. */
export function metricValue(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
