/**
 * Registry v2 (issue 16): registrations whose specs refer to a named schema (`#Name:Version`)
 * and depend on another agent type, and the `graph` and `sbom` queries over a fleet of such
 * agents. Registration is compared with plain specs measured in the same run, on a second
 * replica of its own; the queries have absolute targets.
 */
import { fmt, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import { agentTypeName, BENCH_SCHEMA, type FleetShape } from "../lib/specs.js";
import { withStack } from "../lib/stack.js";
import type { LoopResult } from "../lib/load/closed-loop.js";
import { IN_FLIGHT } from "./lookup.js";

type Seeded = { errors: number; firstError?: string; rate: number };

export const registryV2Scenario: Scenario = {
  name: "registry-v2",
  title: "Registry v2: schema refs, dependencies, graph and SBOM",
  aliases: ["graph", "sbom"],
  method:
    "Two replicas on one nats-server. One holds 1,000 agent types whose capability input schemas refer to a named " +
    "schema and whose specs each depend on another type (a 4-ary tree); the other the same fleet with plain specs, as " +
    "the registration scenario registers them. New instances register with their full spec, 64 in flight, for 10 s on " +
    "each, alternating. Then a third replica holds 10,000 agent types of the first kind and, one request in flight for 5 s " +
    "each: `graph` of a leaf agent's dependencies (its chain to the root, depth 16), `graph` of the root's dependents at " +
    "depth 2, and `sbom` (CycloneDX) of a leaf agent's closure.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const registering = ctx.quick ? 100 : 1000;
    const types = ctx.quick ? 300 : 10_000;
    const durationMs = ctx.quick ? 1500 : 10_000;
    const queryMs = ctx.quick ? 1000 : 5000;
    return withStack(ctx, "registry-v2", async ({ load, registry }) => {
      const fleets: Array<{ label: string; prefix: string; shape: FleetShape; rounds: LoopResult[] }> = [];
      for (const v2 of [true, false]) {
        const prefix = v2 ? "benchv2" : "benchv1";
        await registry({ REGISTRY_PREFIX: prefix, REGISTRY_BUCKET: `bench-${prefix}`, REGISTRY_EVENTS_STREAM: `EVENTS_${prefix}` }, `bench-${prefix}`);
        if (v2) {
          const put = await load.call<{ error: string | null }>("request", { subject: `${prefix}.schema.put.${BENCH_SCHEMA.name}`, body: { version: BENCH_SCHEMA.version, schema: BENCH_SCHEMA.schema } });
          ctx.check(put.error === null, `schema put failed: ${put.error}`);
        }
        fleets.push({ label: v2 ? "with a schema ref and a dependency" : "plain specs", prefix, shape: { types: registering, capsPerType: 4, providersPerCap: 3, v2 }, rounds: [] });
      }
      const register = async (f: (typeof fleets)[number], round: number, ms: number) => {
        await load.call("fleet", { shape: f.shape, instancesPerType: 1, intervalMs: 3_600_000, prefix: f.prefix });
        if (round === 0) {
          const seeded = await load.call<Seeded>("register", { concurrency: IN_FLIGHT });
          ctx.check(seeded.errors === 0, `registering the ${f.label} fleet failed: ${seeded.firstError}`);
          ctx.log(`${fmt(f.shape.types)} agent types, ${f.label}: ${fmt(seeded.rate)}/s`);
          return;
        }
        const r = await load.call<LoopResult>("registrations", { concurrency: IN_FLIGHT, durationMs: ms, intervalMs: 3_600_000, round });
        ctx.check(r.errors === 0, `registrations (${f.label}) failed: ${r.firstError}`);
        f.rounds.push(r);
      };
      for (const f of fleets) await register(f, 0, 0);
      // A warm-up round of each, not counted (the registration scenario warms up the same way).
      for (const f of fleets) {
        await load.call("fleet", { shape: f.shape, instancesPerType: 1, intervalMs: 3_600_000, prefix: f.prefix });
        await load.call("registrations", { concurrency: IN_FLIGHT, durationMs: ctx.quick ? 300 : 2000, intervalMs: 3_600_000, round: 9 });
      }
      for (let round = 1; round <= 2; round++) for (const f of fleets) await register(f, round, durationMs / 2);
      const rate = (f: (typeof fleets)[number]) => f.rounds.reduce((s, r) => s + r.count, 0) / f.rounds.reduce((s, r) => s + r.seconds, 0);
      const [v2, plain] = fleets as [(typeof fleets)[number], (typeof fleets)[number]];

      // The queries' fleet: a third replica with `types` agent types of the v2 kind.
      const big = "benchv2big";
      await registry({ REGISTRY_PREFIX: big, REGISTRY_BUCKET: `bench-${big}`, REGISTRY_EVENTS_STREAM: `EVENTS_${big}` }, `bench-${big}`);
      const put = await load.call<{ error: string | null }>("request", { subject: `${big}.schema.put.${BENCH_SCHEMA.name}`, body: { version: BENCH_SCHEMA.version, schema: BENCH_SCHEMA.schema } });
      ctx.check(put.error === null, `schema put failed: ${put.error}`);
      await load.call("fleet", { shape: { ...v2.shape, types }, instancesPerType: 1, intervalMs: 3_600_000, prefix: big });
      const grown = await load.call<Seeded>("register", { concurrency: IN_FLIGHT });
      ctx.check(grown.errors === 0, `registering ${types} agent types failed: ${grown.firstError}`);
      const leaf = agentTypeName(types - 1);
      const query = async (op: string, body: object): Promise<LoopResult> => {
        const r = await load.call<LoopResult>("requests", { subject: `${big}.${op}`, body, concurrency: 1, durationMs: queryMs });
        ctx.check(r.count > 0 && r.errors === 0, `${op} failed: ${r.firstError}`);
        return r;
      };
      const graphDown = await query("graph", { agent_type: leaf });
      const graphUp = await query("graph", { agent_type: agentTypeName(0), direction: "dependents", depth: 2 });
      const sbom = await query("sbom", { agent_type: leaf });
      const queryRow = (measure: string, r: LoopResult) => ({
        measure: `${measure} at ${fmt(types)} agent types, one in flight`,
        figure: `p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms`,
        baseline: `${fmt(r.rps)} req/s`,
        target: "<= 1 s",
        pass: r.latencyMs.p99 <= 1000,
      });
      return {
        rows: [
          {
            measure: `registrations/s with a schema ref and a dependency, ${fmt(registering)} agent types (${IN_FLIGHT} in flight)`,
            figure: `${fmt(rate(v2))}/s`,
            baseline: `plain specs: ${fmt(rate(plain))}/s (${(rate(v2) / rate(plain)).toFixed(2)} x)`,
            target: ">= 2,000/s",
            pass: rate(v2) >= 2000,
          },
          queryRow("graph: a leaf's dependencies", graphDown),
          queryRow("graph: the root's dependents, depth 2", graphUp),
          queryRow("sbom: a leaf's closure, CycloneDX", sbom),
        ],
        notes: [`registration latency p99 ${Math.max(...v2.rounds.map((r) => r.latencyMs.p99)).toFixed(1)} ms with refs and dependencies, ${Math.max(...plain.rounds.map((r) => r.latencyMs.p99)).toFixed(1)} ms plain`],
        details: { registering, types, v2: v2.rounds, plain: plain.rounds, graphDown, graphUp, sbom },
      };
    });
  },
};
