/**
 * Lookup scaling: the lookup scenario at 100, 1,000, 10,000 and 100,000 agent types (issue 7
 * asked for flat lookups up to 10,000, issue 20 up to 100,000). Four replicas
 * run side by side on one nats-server (each with its own prefix, bucket and stream) and are
 * measured in alternating rounds, so the comparison is not skewed by when each ran. Every
 * capability has 3 providers at every size, so replies stay the same size: only the fleet
 * the registry must search grows.
 */
import { CpuMeter } from "../lib/proc.js";
import type { RegistryProc } from "../lib/processes.js";
import { fmt, ratio, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import type { FleetShape } from "../lib/specs.js";
import { majorGcs, withStack } from "../lib/stack.js";
import type { LoopResult } from "../lib/load/closed-loop.js";
import { combine, IN_FLIGHT } from "./lookup.js";

type Round = LoopResult & { cpu: number; majorGcs: number };
type Replica = { types: number; shape: FleetShape; subject: string; reg: RegistryProc; results: Round[] };

export const lookupScalingScenario: Scenario = {
  name: "lookup-scaling",
  title: "Lookup scaling",
  method:
    "Four replicas on one nats-server hold 100, 1,000, 10,000 and 100,000 agent types (4 capabilities each, 3 providers per " +
    "capability at every size, one instance per type). Lookups of random capabilities, 64 in flight, 3 rounds of 6 s " +
    "per size, the sizes alternating. The figures are the requests/s at 10,000 and at 100,000 agent types as a share of the smallest fleet's.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const sizes = ctx.quick ? [50, 150, 500] : [100, 1000, 10000, 100000];
    const rounds = ctx.quick ? 1 : 3;
    const durationMs = ctx.quick ? 1000 : 6000;
    return withStack(ctx, "lookup-scaling", async ({ load, registry }) => {
      const replicas: Replica[] = [];
      for (const types of sizes) {
        const prefix = `bench${types}`;
        const reg = await registry({ REGISTRY_PREFIX: prefix, REGISTRY_BUCKET: `bench-${types}`, REGISTRY_EVENTS_STREAM: `EVENTS_${types}` }, `bench-${types}`);
        const shape: FleetShape = { types, capsPerType: 4, providersPerCap: 3 };
        await load.call("fleet", { shape, instancesPerType: 1, intervalMs: 3_600_000, prefix });
        const seeded = await load.call<{ errors: number; firstError?: string; rate: number }>("register", { concurrency: 64 });
        ctx.check(seeded.errors === 0, `seeding ${types} agent types failed: ${seeded.firstError}`);
        ctx.log(`${fmt(types)} agent types registered (${fmt(seeded.rate)}/s)`);
        replicas.push({ types, shape, subject: `${prefix}.lookup`, reg, results: [] });
      }
      const measure = async (r: Replica, ms: number): Promise<Round> => {
        const gcsBefore = majorGcs(await r.reg.metrics());
        const cpu = new CpuMeter(r.reg.pid);
        const res = await load.call<LoopResult>("lookups", { shape: r.shape, subject: r.subject, concurrency: IN_FLIGHT, durationMs: ms });
        const cores = cpu.read().cores;
        return { ...res, cpu: cores, majorGcs: majorGcs(await r.reg.metrics()) - gcsBefore };
      };
      for (const r of replicas) await measure(r, ctx.quick ? 300 : 2000);
      for (let i = 0; i < rounds; i++) {
        for (const r of replicas) r.results.push(await measure(r, durationMs));
        ctx.log(`round ${i + 1}: ${replicas.map((r) => `${fmt(r.types)}: ${fmt(r.results[i]!.rps)} req/s`).join(", ")}`);
      }
      const combined = replicas.map((r) => ({
        types: r.types,
        ...combine(r.results),
        majorGcsPerSecond: r.results.reduce((s, x) => s + x.majorGcs, 0) / r.results.reduce((s, x) => s + x.seconds, 0),
      }));
      for (const c of combined) ctx.check(c.count > 0 && c.errors === 0, `lookups at ${c.types} agent types failed or got no answer`);
      const smallest = combined[0]!;
      // Each size a target is set for; a quick run has only its largest.
      const judged = ctx.quick ? [combined[combined.length - 1]!] : combined.filter((c) => c.types >= 10_000);
      return {
        rows: [
          ...combined.map((c) => ({
            measure: `lookup req/s at ${fmt(c.types)} agent types`,
            figure: `${fmt(c.rps)} req/s, p99 ${c.p99.toFixed(2)} ms`,
            baseline: c === smallest ? "(smallest fleet)" : `${ratio(c.rps / smallest.rps)} the smallest fleet`,
            target: "-",
            pass: null,
          })),
          ...judged.map((c) => {
            const share = c.rps / smallest.rps;
            return {
              measure: `lookup scaling ${fmt(smallest.types)} -> ${fmt(c.types)} agent types`,
              figure: `${ratio(share)} (${(share >= 1 ? "+" : "") + ((share - 1) * 100).toFixed(1)}%)`,
              baseline: `${fmt(smallest.rps)} req/s at ${fmt(smallest.types)} agent types`,
              target: "within 20% (>= 0.80 x)",
              pass: share >= 0.8 && share <= 1.2,
            };
          }),
        ],
        notes: combined.map(
          (c) =>
            `${fmt(c.types)} agent types: ${fmt(c.rps)} req/s, p50 ${c.p50.toFixed(2)} ms, p99 ${c.p99.toFixed(2)} ms, registry CPU ${(c.cpu * 100).toFixed(0)}% of a core ` +
            `(${((c.cpu / c.rps) * 1e6).toFixed(1)} µs per lookup), ${c.majorGcsPerSecond.toFixed(1)} full mark-compacts a second`,
        ),
        details: { sizes: combined, rounds: replicas.map((r) => ({ types: r.types, results: r.results })) },
      };
    });
  },
};
