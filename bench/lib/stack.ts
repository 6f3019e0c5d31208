/**
 * A scenario's processes, started together and always torn down together: a nats-server,
 * the load process connected to it, and registry replicas on demand.
 */
import { join } from "node:path";
import type { NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { startLoad, startRegistry, startServer, type LoadProc, type RegistryProc } from "./processes.js";
import type { Context } from "./scenario.js";

export type Stack = {
  readonly server: NatsServerHandle;
  readonly load: LoadProc;
  /** Starts a replica (and waits until /readyz says so, 60 s unless told); stopped with the stack. */
  registry(env?: Record<string, string>, name?: string, readyTimeoutMs?: number): Promise<RegistryProc>;
};

export async function withStack<T>(ctx: Context, scenario: string, body: (stack: Stack) => Promise<T>): Promise<T> {
  const server = await startServer();
  const load = startLoad();
  const registries: RegistryProc[] = [];
  try {
    await load.call("connect", { url: server.url });
    const stack: Stack = {
      server,
      load,
      async registry(env = {}, name = "bench", readyTimeoutMs?: number) {
        const r = await startRegistry({
          natsUrl: server.url,
          env,
          name,
          nodeArgs: ctx.nodeFlags,
          cpuProfDir: ctx.cpuProfDir ? join(ctx.cpuProfDir, scenario) : undefined,
        });
        registries.push(r);
        await r.waitReady(readyTimeoutMs);
        return r;
      },
    };
    return await body(stack);
  } finally {
    await load.call("close").catch(() => undefined);
    await load.stop();
    for (const r of registries.reverse()) await r.stop();
    await server.stop();
  }
}

/** Sums the samples of a metric whose labels include every one of `labels`. */
export function labelled(text: string, name: string, labels: string[]): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) && labels.every((l) => line.includes(l))) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/**
 * Full mark-compacts the registry has run so far (prom-client's GC metrics). Under a steady
 * lookup load there should be next to none; a few a second is V8's mark-compact loop that
 * doubled the CPU per lookup (docs/performance.md, rounds 3 and 4).
 */
export function majorGcs(metricsText: string): number {
  return labelled(metricsText, "nodejs_gc_duration_seconds_count", ['kind="major"']);
}

/** Sums a metric over its label sets in Prometheus text. */
export function metricValue(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
