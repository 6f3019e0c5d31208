import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CheckWheel } from "../../../../src/domain/lifecycle/check-wheel.js";
import type { InstanceState } from "../../../../src/domain/model/model.js";

const inst = (id: string) => ({ agent_type: "a", instance_id: id }) as InstanceState;

describe("CheckWheel", () => {
  it("gives an instance back on the first take at or past its time, once", () => {
    const w = new CheckWheel(100);
    const a = inst("a");
    const b = inst("b");
    w.file(a, 1_050);
    w.file(b, 1_250);
    expect(w.take(999)).toEqual([]);
    // Same slot as 1,050: taken early, the caller judges it not due and files it again.
    expect(w.take(1_010)).toEqual([a]);
    w.file(a, 1_050);
    expect(w.take(1_060)).toEqual([a]);
    expect(w.take(1_300)).toEqual([b]);
    expect(w.take(5_000)).toEqual([]);
    expect(w.size).toBe(0);
  });

  it("keeps the earlier of two filings and drops the later copy", () => {
    const w = new CheckWheel(100);
    const a = inst("a");
    w.file(a, 2_000);
    w.file(a, 1_000);
    w.file(a, 3_000);
    expect(w.size).toBe(1);
    expect(w.take(1_000)).toEqual([a]);
    expect(w.take(3_000)).toEqual([]);
  });

  it("files a time already passed for the next take", () => {
    const w = new CheckWheel(100);
    w.take(1_000);
    const a = inst("a");
    w.file(a, 500);
    expect(w.take(1_050)).toEqual([a]);
    expect(w.take(1_100)).toEqual([]);
  });

  it("after a long pause, takes everything due in slot order without stepping over every slot", () => {
    const w = new CheckWheel(1);
    w.take(0);
    const early = inst("early");
    const late = inst("late");
    w.file(late, 9e11);
    w.file(early, 5e11);
    expect(w.take(1e12)).toEqual([early, late]);
  });

  it("keeps its bookkeeping out of the instance's JSON and keys, and apart from another wheel's", () => {
    const a = { ...inst("a"), version: "1.0.0" } as InstanceState;
    const before = JSON.stringify(a);
    const one = new CheckWheel(100);
    const two = new CheckWheel(100);
    one.file(a, 1_000);
    two.file(a, 5_000);
    expect(JSON.stringify(a)).toBe(before);
    expect(Object.keys(a)).toEqual(["agent_type", "instance_id", "version"]);
    expect(two.take(1_000)).toEqual([]);
    expect(one.take(1_000)).toEqual([a]);
    expect(two.take(5_000)).toEqual([a]);
    expect([one.size, two.size]).toEqual([0, 0]);
  });

  it("after clear, files every instance again as if new", () => {
    const w = new CheckWheel(100);
    const a = inst("a");
    const b = inst("b");
    w.file(a, 1_000);
    w.file(b, 2_000);
    w.clear();
    expect(w.size).toBe(0);
    expect(w.take(3_000)).toEqual([]);
    // Filed later than before the clear: a stale earlier filing must not hold it back.
    w.file(a, 4_000);
    w.file(b, 3_500);
    expect(w.size).toBe(2);
    expect(w.take(4_000)).toEqual([b, a]);
  });

  it("property: every filed instance comes back exactly once, at the first take at or past its slot", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.nat(20)), { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 30 }), (filings, steps) => {
        const w = new CheckWheel(50);
        const instances = Array.from({ length: 21 }, (_, k) => inst(String(k)));
        const earliest = new Map<InstanceState, number>();
        for (const [at, k] of filings) {
          const i = instances[k]!;
          w.file(i, at);
          earliest.set(i, Math.min(earliest.get(i) ?? Infinity, at));
        }
        let now = 0;
        const seen = new Map<InstanceState, number>();
        for (const step of [...steps, 10_000]) {
          const before = now;
          now += step;
          for (const i of w.take(now)) {
            expect(seen.has(i)).toBe(false);
            seen.set(i, now);
            // Not before its slot's take, and no later than the first take in or after its slot.
            expect(Math.floor(earliest.get(i)! / 50)).toBeLessThanOrEqual(Math.floor(now / 50));
            if (before > 0) expect(earliest.get(i)!).toBeGreaterThan(before);
          }
        }
        expect(seen.size).toBe(earliest.size);
      }),
    );
  });
});
