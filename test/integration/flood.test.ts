/**
 * Floods against one registry process while another client keeps looking up (issue 6):
 * heartbeats for instances that do not exist (request/reply, and a burst of plain publishes),
 * a crash-looping agent type registering fresh instances, one agent type registering specs
 * full of distinct schemas at the size and node limits (the costliest valid request), and one
 * registering specs of patterns built to backtrack (issue 14: compiled for the linear-time
 * engine, in worker threads). Every lookup must be answered; the lookup p50/p99 before and
 * during each flood, and the registry's peak RSS, are printed for docs/reliability.md, with no
 * timing assertion (CI machines differ).
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";
import { MAX_SCHEMA_NODES } from "../../src/domain/spec/schema-check.js";

const FLOOD_MS = Number(process.env.FLOOD_MS ?? (process.env.RELIABILITY_FULL === "1" ? 10_000 : 2_000));
const PREFIX = "fl.registry";

type Sample = { ms: number[]; failed: number; firstFailure?: string };
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const summary = (s: Sample) => `${s.ms.length} lookups, p50 ${pct(s.ms, 50).toFixed(2)} ms, p99 ${pct(s.ms, 99).toFixed(2)} ms, max ${Math.max(...s.ms).toFixed(1)} ms`;

/** Sequential lookups from their own connection until `done` resolves. */
async function lookupsDuring(c: RawClient, done: Promise<unknown>): Promise<Sample> {
  const sample: Sample = { ms: [], failed: 0 };
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    const started = performance.now();
    const r = await c.request("lookup", { capability: "target.run" }, 10_000).catch((e: unknown) => String(e));
    if (typeof r === "object" && r.ok && r.body.providers.length === 1) sample.ms.push(performance.now() - started);
    else if (sample.failed++ === 0) sample.firstFailure = JSON.stringify(typeof r === "object" ? r.body : r).slice(0, 300);
  }
  return sample;
}

/** `concurrency` closed loops sending `next()` requests for FLOOD_MS; counts outcomes. */
async function flood(c: RawClient, concurrency: number, next: (i: number) => [string, unknown]): Promise<Map<string, number>> {
  const outcomes = new Map<string, number>();
  const until = Date.now() + FLOOD_MS;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const [subject, body] = next(n++);
        const r = await c.request(subject, body, 30_000).catch(() => null);
        const key = !r ? "no answer" : r.ok ? "ok" : r.body.error.code;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }),
  );
  return outcomes;
}

/** The process's peak resident memory while `done` runs, from /proc (Linux), in MB. */
async function peakRssDuring(pid: number, done: Promise<unknown>): Promise<number> {
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
  let peak = rss();
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    peak = Math.max(peak, rss());
    await new Promise((r) => setTimeout(r, 100));
  }
  return Math.max(peak, rss());
}

const rate = (m: Map<string, number>) => {
  const total = [...m.values()].reduce((a, b) => a + b, 0);
  return `${Math.round((total * 1000) / FLOOD_MS)} req/s (${[...m.entries()].map(([k, v]) => `${k} ${v}`).join(", ")})`;
};

/**
 * Register bodies whose every capability schema is distinct (no verdict cache hit) and at the
 * node limit: the costliest valid request. Built once as text; each one differs by its seed,
 * so the flooding client spends no time encoding while the lookups are timed.
 */
function heavyBodies(): (seed: number) => string {
  const schema = (k: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES - 2 }, (_, i) => [`pSEED_${k}_${i}`, { type: "string", minLength: 1 }])) });
  const capabilities = Array.from({ length: 10 }, (_, i) => ({ name: `heavy.c${i}`, description: "", input_schema: schema(2 * i), output_schema: schema(2 * i + 1) }));
  const parts = JSON.stringify({ spec: spec("heavy", { capabilities }), instance_id: "h1", heartbeat_interval_ms: 60_000 }).split("SEED");
  return (seed) => parts.join(seed.toString(36));
}

/**
 * Register bodies whose schemas carry patterns that backtrack catastrophically in V8's engine
 * (chained and nested repeats, accepted and compiled for RE2) or that no linear-time engine
 * runs (lookaround, refused), each body new so nothing is cached.
 */
function patternBodies(): (seed: number) => string {
  const hostile = ["^[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*!", "^a*a*a*a*a*a*b", "^(a+)+", "(.*a){20}", "^(\\w+\\s?)*"];
  const schema = (tag: string, refused: boolean) => ({
    type: "object",
    properties: Object.fromEntries(hostile.map((p, i) => [`q${i}`, { type: "string", pattern: `${p}SEED${tag}$` }])),
    patternProperties: Object.fromEntries(hostile.map((p) => [`${p}SEED${tag}k$`, { type: "integer" }])),
    ...(refused ? { propertyNames: { pattern: `^(?!admin)SEED${tag}` } } : {}),
  });
  const body = (refused: boolean) =>
    JSON.stringify({
      spec: spec("patterns", { capabilities: Array.from({ length: 10 }, (_, i) => ({ name: `patterns.c${i}`, description: "", input_schema: schema(`i${i}`, false), output_schema: schema(`o${i}`, refused && i === 9) })) }),
      instance_id: "p1",
    }).split("SEED");
  const accepted = body(false);
  const refused = body(true);
  return (seed) => (seed % 2 === 0 ? accepted : refused).join(`x${seed.toString(36)}`);
}

const FULL = process.env.RELIABILITY_FULL === "1";
const CONFIGS: Array<[string, Record<string, string>]> = [
  ["no per-type limits", { REGISTRY_TYPE_SPEC_CHECK_MS: "0" }],
  ...(FULL ? [["defaults (spec validation budget 100 ms/s)", {}] as [string, Record<string, string>]] : []),
  ["defaults + REGISTRY_TYPE_RATE_LIMIT=100", { REGISTRY_TYPE_RATE_LIMIT: "100" }],
];

it.each(CONFIGS)("keeps answering lookups from others while one client floods, with %s", { timeout: 60_000 + 8 * FLOOD_MS }, async (label, limits) => {
  await using server = await withNatsServer();
  const proc = await spawnRegistry("flood", { NATS_URL: server.url, REGISTRY_PREFIX: PREFIX, REGISTRY_BUCKET: "fl-registry", REGISTRY_EVENTS_STREAM: "FL_EVENTS", LOG_LEVEL: "warn", ...limits });
  const coordinator = await RawClient.connect(server.url, PREFIX);
  const attacker = await RawClient.connect(server.url, PREFIX);
  const figures: string[] = [];
  try {
    const registered = await coordinator.request("register.target", { spec: spec("target"), instance_id: "t1" });
    expect(registered.ok).toBe(true);
    // The reply comes once the write is stored; the view may apply it a moment later.
    const seen = await coordinator.request("lookup", { capability: "target.run", min_revision: registered.body.revision }, 10_000);
    expect(seen.ok && seen.body.providers.length).toBe(1);
    const idle = await lookupsDuring(coordinator, new Promise((r) => setTimeout(r, 1500)));
    figures.push(`before any flood: ${summary(idle)}`);
    expect(idle.failed, idle.firstFailure).toBe(0);

    const heavy = heavyBodies();
    const patterns = patternBodies();
    const phases: Array<[string, () => Promise<Map<string, number>>]> = [
      ["heartbeats for unknown instances, 64 in flight", () => flood(attacker, 64, (i) => [`heartbeat.ghost.g${i}`, {}])],
      ["crash-looping agent type registering fresh instances, 16 in flight", () => flood(attacker, 16, (i) => ["register.looper", { spec: spec("looper"), instance_id: `l${i}`, heartbeat_interval_ms: 60_000 }])],
      ["one agent type registering specs of 20 distinct schemas at the node limit, 4 in flight", () => flood(attacker, 4, (i) => ["register.heavy", heavy(i)])],
      ["one agent type registering specs of 20 schemas with 200 new backtracking-prone patterns (every other spec with a lookahead), 4 in flight", () => flood(attacker, 4, (i) => ["register.patterns", patterns(i)])],
    ];
    for (const [name, run] of phases) {
      const flooding = run();
      const [during, peakRss] = await Promise.all([lookupsDuring(coordinator, flooding), peakRssDuring(proc.pid, flooding)]);
      figures.push(`${name}: flood ${rate(await flooding)}; lookups during it: ${summary(during)}; registry peak RSS ${peakRss.toFixed(0)} MB`);
      expect(during.failed, `${name}: ${during.firstFailure}`).toBe(0);
      expect(during.ms.length, name).toBeGreaterThan(0);
    }

    // A burst of plain publishes (no reply, as agents heartbeat): the registry drains it in order,
    // and a lookup sent behind it waits for the drain.
    const BURST = 20_000;
    const before = metricValue(await proc.metrics(), "agent_registry_heartbeats_total");
    const sent = performance.now();
    for (let i = 0; i < BURST; i++) attacker.nc.publish(`${PREFIX}.heartbeat.ghost.b${i}`, "{}");
    await attacker.nc.flush();
    const behind = performance.now();
    const r = await coordinator.request("lookup", { capability: "target.run" }, 60_000);
    const lookupBehindMs = performance.now() - behind;
    expect(r.ok).toBe(true);
    await waitFor(async () => metricValue(await proc.metrics(), "agent_registry_heartbeats_total") - before >= BURST, { timeoutMs: 60_000, intervalMs: 200, message: "burst drained" });
    const drainMs = performance.now() - sent;
    figures.push(`burst of ${BURST} unreplied heartbeats for unknown instances: drained in ${drainMs.toFixed(0)} ms (${Math.round((BURST * 1000) / drainMs)}/s); a lookup sent right behind it took ${lookupBehindMs.toFixed(0)} ms`);

    const after = await lookupsDuring(coordinator, new Promise((res) => setTimeout(res, 1500)));
    figures.push(`after the floods: ${summary(after)}`);
    expect(after.failed, after.firstFailure).toBe(0);
    expect(await proc.ready()).toBe(true);
    console.log(`flood, ${label} (${FLOOD_MS} ms per phase):\n  ${figures.join("\n  ")}`);
  } finally {
    await attacker.close();
    await coordinator.close();
    await proc.stop();
  }
});
