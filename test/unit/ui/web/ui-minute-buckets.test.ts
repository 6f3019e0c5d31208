/** The page's per-minute counts of registrations, deregistrations and evictions (src/ui/web/minute-buckets.ts). */
import { describe, expect, it } from "vitest";
import { MINUTES, MinuteBuckets } from "../../../../src/ui/web/minute-buckets.js";

const at = (iso: string) => ({ time: iso, data: {} });

describe("MinuteBuckets", () => {
  it("counts each event in its minute, an eviction as a deregistration too, over the last hour", () => {
    const b = new MinuteBuckets();
    b.add({ type: "registry.agent.registered", ...at("2026-11-27T20:00:10Z") });
    b.add({ type: "registry.agent.registered", ...at("2026-11-27T20:00:50Z") });
    b.add({ type: "registry.agent.deregistered", time: "2026-11-27T20:01:05Z", data: { reason: "evicted" } });
    b.add({ type: "registry.agent.deregistered", time: "2026-11-27T20:01:30Z", data: { reason: "requested" } });
    b.add({ type: "registry.agent.status_changed", ...at("2026-11-27T20:01:30Z") });
    b.add({ type: "registry.agent.registered", ...at("not a time") });
    const s = b.series(Date.parse("2026-11-27T20:01:59Z"));
    expect(s.minutes).toHaveLength(MINUTES);
    expect(s.minutes.at(-1)).toBe(Date.parse("2026-11-27T20:01:00Z") / 1000);
    expect(s.registrations.slice(-2)).toEqual([2, 0]);
    expect(s.deregistrations.slice(-2)).toEqual([0, 2]);
    expect(s.evictions.slice(-2)).toEqual([0, 1]);
    expect(s.registrations.reduce((a, n) => a + n, 0)).toBe(2);
  });

  it("drops what is older than the hour shown", () => {
    const b = new MinuteBuckets();
    b.add({ type: "registry.agent.registered", ...at("2026-11-27T18:00:00Z") });
    const s = b.series(Date.parse("2026-11-27T20:00:00Z"));
    expect(s.registrations.every((n) => n === 0)).toBe(true);
  });
});
