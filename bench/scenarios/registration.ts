/**
 * Registration throughput: new instances of existing agent types, the common case (agents
 * scaling out and restarting), each with its full AgentSpec in the body, validated and
 * written with compare-and-set like any registration. The first registration of each
 * type (which also writes the spec) is reported on the side.
 */
import { CpuMeter } from "../lib/proc.js";
import { fmt, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import type { FleetShape } from "../lib/specs.js";
import { withStack } from "../lib/stack.js";
import type { LoopResult } from "../lib/load/closed-loop.js";
import { IN_FLIGHT } from "./lookup.js";

type Seeded = { errors: number; firstError?: string; rate: number; seconds: number };

export const registrationScenario: Scenario = {
  name: "registration",
  title: "Registration",
  method:
    "1,000 agent types are registered first (one instance each; each first registration also writes the spec). Then " +
    "new instances of those types register, 64 in flight, for 20 s, each body carrying the full AgentSpec (about 2 KB). " +
    "The figure is completed registrations per second over the whole 20 s. Then the same with A2A v1.0 cards (agent types of " +
    "their own, registered once first): each body carries the card, checked against the A2A schema and mapped every time.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const shape: FleetShape = { types: ctx.quick ? 50 : 1000, capsPerType: 4, providersPerCap: 3 };
    const durationMs = ctx.quick ? 2000 : 20_000;
    return withStack(ctx, "registration", async ({ load, registry }) => {
      const reg = await registry();
      await load.call("fleet", { shape, instancesPerType: 1, intervalMs: 3_600_000 });
      const seeded = await load.call<Seeded>("register", { concurrency: IN_FLIGHT });
      ctx.check(seeded.errors === 0, `first registrations failed: ${seeded.firstError}`);
      await load.call("registrations", { concurrency: IN_FLIGHT, durationMs: ctx.quick ? 500 : 3000, intervalMs: 3_600_000, round: 0 });
      const cpu = new CpuMeter(reg.pid);
      const r = await load.call<LoopResult>("registrations", { concurrency: IN_FLIGHT, durationMs, intervalMs: 3_600_000, round: 1 });
      const used = cpu.read();
      ctx.check(r.count > 0, "no registration completed");
      ctx.check(r.errors === 0, `registrations failed: ${r.firstError}`);
      // The same with A2A cards: a first pass registers every card type, then instances of them.
      await load.call("cardRegistrations", { concurrency: IN_FLIGHT, durationMs: ctx.quick ? 500 : 3000, intervalMs: 3_600_000, round: 0 });
      const cards = await load.call<LoopResult>("cardRegistrations", { concurrency: IN_FLIGHT, durationMs, intervalMs: 3_600_000, round: 1 });
      ctx.check(cards.count > 0, "no card registration completed");
      ctx.check(cards.errors === 0, `card registrations failed: ${cards.firstError}`);
      return {
        rows: [
          {
            measure: `registrations/s sustained (${durationMs / 1000} s, ${IN_FLIGHT} in flight)`,
            figure: `${fmt(r.rps)}/s, p99 ${r.latencyMs.p99.toFixed(1)} ms`,
            baseline: `first registration of a type: ${fmt(seeded.rate)}/s`,
            target: ">= 2,000/s",
            pass: r.rps >= 2000,
          },
          {
            measure: `registrations/s with an A2A card (${durationMs / 1000} s, ${IN_FLIGHT} in flight)`,
            figure: `${fmt(cards.rps)}/s, p99 ${cards.latencyMs.p99.toFixed(1)} ms`,
            baseline: `with the AgentSpec: ${fmt(r.rps)}/s (${(cards.rps / r.rps).toFixed(2)} x)`,
            target: ">= 0.5 x the spec's",
            pass: cards.rps >= 0.5 * r.rps,
          },
        ],
        notes: [
          `${fmt(r.count)} registrations in ${r.seconds} s; latency p50 ${r.latencyMs.p50.toFixed(1)} ms, p99 ${r.latencyMs.p99.toFixed(1)} ms`,
          `registry CPU ${(used.cores * 100).toFixed(0)}% of a core while registering`,
        ],
        details: { shape, seeded, sustained: r, cards, registryCpuCores: used.cores },
      };
    });
  },
};
