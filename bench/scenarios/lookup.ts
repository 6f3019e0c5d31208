/**
 * Lookup throughput against a bare responder. Both answer the same request bodies at the
 * same depth (64 in flight) from the same load process; the baseline replies with a real
 * lookup reply of median size, so the difference is what the registry does per lookup.
 * The two alternate in short rounds, so noise from other work on the machine hits both.
 */
import { join } from "node:path";
import { startBareResponder } from "../lib/processes.js";
import { CpuMeter } from "../lib/proc.js";
import { fmt, ratio, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import type { FleetShape } from "../lib/specs.js";
import { majorGcs, withStack } from "../lib/stack.js";
import type { LoopResult } from "../lib/load/closed-loop.js";

export const IN_FLIGHT = 64;
const BARE_SUBJECT = "bench.bare.lookup";

export type Measured = { rps: number; p99: number; p50: number; errors: number; count: number; cpu: number };

/** Sums rounds: throughput over all of them, the median round's percentiles. */
export function combine(rounds: Array<LoopResult & { cpu: number }>): Measured {
  const count = rounds.reduce((s, r) => s + r.count, 0);
  const seconds = rounds.reduce((s, r) => s + r.seconds, 0);
  const med = (f: (r: LoopResult) => number): number => [...rounds].map(f).sort((a, b) => a - b)[Math.floor(rounds.length / 2)]!;
  return {
    rps: count / seconds,
    p99: med((r) => r.latencyMs.p99),
    p50: med((r) => r.latencyMs.p50),
    errors: rounds.reduce((s, r) => s + r.errors, 0),
    count,
    cpu: rounds.reduce((s, r) => s + r.cpu * r.seconds, 0) / seconds,
  };
}

export const lookupScenario: Scenario = {
  name: "lookup",
  title: "Lookup throughput",
  method:
    "1,000 agent types (one instance each), 4 capabilities per type, 3 providers per capability. " +
    "The load process sends `registry.lookup` for random capabilities, 64 in flight, in 3 rounds of 8 s " +
    "alternating with the baseline: a bare `@nats-io/services` endpoint (same connection options, queue group) " +
    "replying with a real lookup reply of median size. Throughput is over all rounds, p99 the median round's.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const shape: FleetShape = { types: ctx.quick ? 100 : 1000, capsPerType: 4, providersPerCap: 3 };
    const rounds = ctx.quick ? 1 : 3;
    const durationMs = ctx.quick ? 1500 : 8000;
    return withStack(ctx, "lookup", async ({ server, load, registry }) => {
      const reg = await registry();
      await load.call("fleet", { shape, instancesPerType: 1, intervalMs: 3_600_000 });
      const seeded = await load.call<{ errors: number; firstError?: string }>("register", { concurrency: 64 });
      ctx.check(seeded.errors === 0, `seeding the fleet failed: ${seeded.firstError}`);
      const sample = await load.call<{ meanBytes: number; medianBytes: number; median: string }>("sampleLookups", { shape });
      ctx.check(sample.median.includes('"providers":[{'), `a lookup found no provider: ${sample.median.slice(0, 200)}`);
      const bare = await startBareResponder(server.url, BARE_SUBJECT, sample.median, ctx.cpuProfDir ? join(ctx.cpuProfDir, "lookup-baseline") : undefined);
      try {
        const measure = async (subject: string, pid: number, ms: number) => {
          const meters = [new CpuMeter(pid), new CpuMeter(server.pid), new CpuMeter(load.pid)];
          const r = await load.call<LoopResult>("lookups", { shape, subject, concurrency: IN_FLIGHT, durationMs: ms });
          const [cpu, nats, loadCpu] = meters.map((m) => m.read().cores) as [number, number, number];
          return { ...r, cpu, natsCpu: nats, loadCpu };
        };
        // Warm-up: JIT and connection buffers of both sides.
        await measure(BARE_SUBJECT, bare.pid, ctx.quick ? 500 : 2000);
        await measure("registry.lookup", reg.pid, ctx.quick ? 500 : 2000);
        const base: Array<LoopResult & { cpu: number }> = [];
        const look: Array<LoopResult & { cpu: number }> = [];
        let lookupGcs = 0;
        for (let i = 0; i < rounds; i++) {
          base.push(await measure(BARE_SUBJECT, bare.pid, durationMs));
          const gcsBefore = majorGcs(await reg.metrics());
          look.push(await measure("registry.lookup", reg.pid, durationMs));
          lookupGcs += majorGcs(await reg.metrics()) - gcsBefore;
          ctx.log(`round ${i + 1}: baseline ${fmt(base[i]!.rps)} req/s, lookup ${fmt(look[i]!.rps)} req/s`);
        }
        const b = combine(base);
        const l = combine(look);
        ctx.check(b.count > 0 && l.count > 0, "no request was answered");
        ctx.check(b.errors === 0 && l.errors === 0, `requests failed: ${look.find((r) => r.firstError)?.firstError ?? base.find((r) => r.firstError)?.firstError}`);
        const rpsRatio = l.rps / b.rps;
        const p99Ratio = l.p99 / b.p99;
        return {
          rows: [
            {
              measure: `lookup req/s, ${fmt(shape.types)} agent types, ${IN_FLIGHT} in flight`,
              figure: `${fmt(l.rps)} req/s (${ratio(rpsRatio)} baseline)`,
              baseline: `${fmt(b.rps)} req/s bare responder, ${fmt(sample.medianBytes)} B replies`,
              target: ">= 0.8 x baseline",
              pass: rpsRatio >= 0.8,
            },
            {
              measure: "lookup p99 latency",
              figure: `${l.p99.toFixed(2)} ms (${ratio(p99Ratio)} baseline)`,
              baseline: `${b.p99.toFixed(2)} ms bare responder`,
              target: "<= 1.5 x baseline",
              pass: p99Ratio <= 1.5,
            },
          ],
          notes: [
            `CPU per request: registry ${((l.cpu / l.rps) * 1e6).toFixed(1)} µs, bare responder ${((b.cpu / b.rps) * 1e6).toFixed(1)} µs; ` +
              `the registry ran ${(lookupGcs / (l.count / l.rps)).toFixed(1)} full mark-compacts a second during its rounds`,
          ],
          details: { shape, replyBytes: sample, baseline: b, lookup: l, rounds: { baseline: base, lookup: look }, registryCpuCores: l.cpu, responderCpuCores: b.cpu, lookupMajorGcs: lookupGcs },
        };
      } finally {
        await bare.stop();
      }
    });
  },
};
