/**
 * Cold start: a replica starting against a bucket that already holds 10,000 agent types and
 * 100,000 instances (written straight into the bucket by the load process, in the registry's
 * record format). Measured from spawning the process to /readyz answering 200, which
 * includes node and tsx starting, connecting, and loading the whole view from the KV watch.
 */
import { mb, rssBytes } from "../lib/proc.js";
import { sleep } from "../lib/processes.js";
import { fmt, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import type { FleetShape } from "../lib/specs.js";
import { withStack } from "../lib/stack.js";

type Start = { readyMs: number; viewLoadMs: number | null; rssAtReady: number; rssSettled: number; recoveredWrites: number | null };

/**
 * The writes whose events a start derived (view-feed.ts): the load process seeds the bucket
 * behind the registry's back, as a replica that died before storing their events would have,
 * so each start here also recovers; its cost is part of the figure.
 */
function recoveredWrites(lines: string[]): number | null {
  const line = lines.find((l) => l.includes('"msg":"derived the events of writes after the last stored event"'));
  if (line === undefined) return null;
  try {
    return (JSON.parse(line) as { writes: number }).writes;
  } catch {
    return null;
  }
}

/** Milliseconds between two pino log lines of the registry, found by message. */
function logSpan(lines: string[], from: string, to: string): number | null {
  const time = (msg: string): number | undefined => {
    for (const line of lines) {
      if (!line.includes(`"msg":"${msg}"`)) continue;
      try {
        return (JSON.parse(line) as { time: number }).time;
      } catch {
        return undefined;
      }
    }
    return undefined;
  };
  const a = time(from);
  const b = time(to);
  return a !== undefined && b !== undefined ? b - a : null;
}

export const coldStartScenario: Scenario = {
  name: "cold-start",
  title: "Cold start",
  method:
    "The load process writes 10,000 agent records and 100,000 instance records into the bucket, then a replica is " +
    "spawned 3 times in a row (stopped in between) and timed from spawn to /readyz 200. The figure is the median start; " +
    "the in-process part (log line `starting` to `view loaded`) and the RSS once ready are reported beside it.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const shape: FleetShape = { types: ctx.quick ? 500 : 10_000, capsPerType: 4, providersPerCap: 3 };
    const instancesPerType = 10;
    const starts = ctx.quick ? 1 : 3;
    return withStack(ctx, "cold-start", async ({ load, registry }) => {
      // The first replica creates the bucket and the events stream, as in production.
      const first = await registry({}, "bench-setup");
      await first.stop();
      const seeded = await load.call<{ agents: number; instances: number; seconds: number; rate: number }>("seedBucket", { shape, instancesPerType, intervalMs: 30_000 });
      ctx.log(`bucket seeded: ${fmt(seeded.agents)} agent types, ${fmt(seeded.instances)} instances in ${seeded.seconds} s`);
      const results: Start[] = [];
      for (let i = 0; i < starts; i++) {
        const reg = await registry({}, `bench-cold-${i}`);
        const readyMs = performance.now() - reg.spawnedAt;
        const rssAtReady = rssBytes(reg.pid);
        await sleep(ctx.quick ? 500 : 3000);
        const agents = /agent_registry_agents\{status="ready"\} (\d+)/.exec(await reg.metrics())?.[1];
        ctx.check(Number(agents) === shape.types, `the replica's view holds ${agents} ready agent types, not ${shape.types}`);
        results.push({ readyMs, viewLoadMs: logSpan(reg.logs, "starting", "view loaded"), rssAtReady, rssSettled: rssBytes(reg.pid), recoveredWrites: recoveredWrites(reg.logs) });
        await reg.stop();
        ctx.log(`start ${i + 1}: ready in ${fmt(readyMs)} ms (view loaded ${results[i]!.viewLoadMs} ms after "starting"), RSS ${mb(rssAtReady)} MB`);
      }
      const sorted = [...results].sort((a, b) => a.readyMs - b.readyMs);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const peakRss = Math.max(...results.map((r) => Math.max(r.rssAtReady, r.rssSettled)));
      return {
        rows: [
          {
            measure: `cold start, ${fmt(seeded.instances)} instances / ${fmt(seeded.agents)} agent types`,
            figure: `${fmt(median.readyMs)} ms to /readyz 200 (median of ${starts})`,
            baseline:
              `in process: ${median.viewLoadMs === null ? "?" : fmt(median.viewLoadMs)} ms from "starting" to "view loaded"` +
              (median.recoveredWrites === null ? "" : `, deriving the events of ${fmt(median.recoveredWrites)} writes`),
            target: "<= 3,000 ms",
            pass: median.readyMs <= 3000,
          },
          {
            measure: "registry RSS once started (at rest)",
            figure: `${fmt(mb(peakRss))} MB`,
            baseline: "no load",
            target: "<= 300 MB",
            pass: mb(peakRss) <= 300,
          },
        ],
        notes: [
          `bucket seeded directly at ${fmt(seeded.rate)} writes/s`,
          ...results.map((r, i) => `start ${i + 1}: ${fmt(r.readyMs)} ms to ready, view loaded ${r.viewLoadMs} ms after "starting", RSS ${mb(r.rssAtReady)} MB at ready, ${mb(r.rssSettled)} MB a moment later`),
        ],
        details: { shape, instancesPerType, seeded, starts: results },
      };
    });
  },
};
