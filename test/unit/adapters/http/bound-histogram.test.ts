import fc from "fast-check";
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { BoundHistogram } from "../../../../src/adapters/http/bound-histogram.js";
import { REQUEST_DURATION_BUCKETS } from "../../../../src/adapters/http/metrics.js";

const NAME = "test_duration_seconds";
const HELP = "a duration";
const LABELS = ["endpoint", "outcome"] as const;

describe("BoundHistogram", () => {
  it("exports exactly what prom-client's Histogram exports for the same observations", async () => {
    const observation = fc.record({
      endpoint: fc.constantFrom("heartbeat", "lookup", "register"),
      outcome: fc.constantFrom("ok", "unavailable", "shed"),
      // Bounds themselves included: an observation equal to a bound belongs to its bucket.
      value: fc.oneof(fc.double({ min: 0, max: 3, noNaN: true }), fc.constantFrom(...REQUEST_DURATION_BUCKETS)),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
        const ours = new Registry();
        const theirs = new Registry();
        const bound = new BoundHistogram({ name: NAME, help: HELP, labelNames: LABELS, buckets: REQUEST_DURATION_BUCKETS, registers: [ours] });
        const reference = new Histogram({ name: NAME, help: HELP, labelNames: LABELS, buckets: [...REQUEST_DURATION_BUCKETS], registers: [theirs] });
        for (const { endpoint, outcome, value } of observations) {
          bound.bind({ endpoint, outcome })(value);
          reference.observe({ endpoint, outcome }, value);
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
      }),
    );
  });

  it("keeps counting through an observer bound before a reset, from zero", async () => {
    const registry = new Registry();
    const h = new BoundHistogram({ name: NAME, help: HELP, labelNames: LABELS, buckets: [0.1, 1], registers: [registry] });
    const observe = h.bind({ endpoint: "lookup", outcome: "ok" });
    observe(0.05);
    observe(2);
    expect(await registry.metrics()).toContain(`${NAME}_count{endpoint="lookup",outcome="ok"} 2`);
    h.reset();
    observe(0.5);
    const text = await registry.metrics();
    expect(text).toContain(`${NAME}_bucket{le="0.1",endpoint="lookup",outcome="ok"} 0`);
    expect(text).toContain(`${NAME}_bucket{le="1",endpoint="lookup",outcome="ok"} 1`);
    expect(text).toContain(`${NAME}_sum{endpoint="lookup",outcome="ok"} 0.5`);
    // The same label set bound again is the same series.
    h.bind({ endpoint: "lookup", outcome: "ok" })(0.5);
    expect(await registry.metrics()).toContain(`${NAME}_count{endpoint="lookup",outcome="ok"} 2`);
  });

  it("ignores a duration that is not a finite number rather than poisoning the sum", async () => {
    const registry = new Registry();
    const h = new BoundHistogram({ name: NAME, help: HELP, labelNames: LABELS, buckets: [1], registers: [registry] });
    const observe = h.bind({ endpoint: "lookup", outcome: "ok" });
    observe(Number.NaN);
    observe(Number.POSITIVE_INFINITY);
    observe(0.25);
    const text = await registry.metrics();
    expect(text).toContain(`${NAME}_sum{endpoint="lookup",outcome="ok"} 0.25`);
    expect(text).toContain(`${NAME}_count{endpoint="lookup",outcome="ok"} 1`);
  });
});
