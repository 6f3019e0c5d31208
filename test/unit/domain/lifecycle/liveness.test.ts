import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { evictionDeadline, evictionWindow, planEvictions, planEvictionsWithNext, type LivenessPolicy } from "../../../../src/domain/lifecycle/liveness.js";
import type { InstanceState } from "../../../../src/domain/model/model.js";

const policy: LivenessPolicy = { missedHeartbeats: 3, selfPreservationRatio: 0 };

/** An instance whose last heartbeat the evicting replica heard at `heardAt` (stamped then too, unless `extra` says otherwise). */
const inst = (id: string, heardAt: number, intervalMs = 1000, extra: Partial<InstanceState> = {}): InstanceState => ({
  agent_type: "alpha",
  instance_id: id,
  version: "1.0.0",
  status: "ready",
  registered_at: 0,
  last_heartbeat: heardAt,
  heartbeat_interval_ms: intervalMs,
  active_tasks: 0,
  metadata: {},
  revision: 1,
  observed_at: heardAt,
  ...extra,
});

const dueIds = (instances: InstanceState[], now: number, graceStart = 0, p = policy): string[] =>
  planEvictions(instances, now, graceStart, p).due.map((i) => i.instance_id);

describe("eviction deadline", () => {
  it("is the heartbeat heard + missed x interval, counted once", () => {
    expect(evictionWindow({ heartbeat_interval_ms: 1000 }, policy)).toBe(3000);
    // Registered at 0, renewed at 10,000: the deadline is 13,000, not a further window later.
    const renewed = inst("a", 10_000);
    expect(evictionDeadline(renewed, 0, policy)).toBe(13_000);
    expect(dueIds([renewed], 12_999)).toEqual([]);
    expect(dueIds([renewed], 13_000)).toEqual(["a"]);
    expect(dueIds([renewed], 14_000)).toEqual(["a"]);
  });

  it("follows missedHeartbeats and the instance's own interval", () => {
    expect(evictionDeadline(inst("a", 1000, 250), 0, { ...policy, missedHeartbeats: 5 })).toBe(2250);
    expect(evictionDeadline(inst("a", 1000, 60_000), 0, policy)).toBe(181_000);
  });

  it("is pushed to a full window after a grace start", () => {
    const stale = inst("a", 1000);
    expect(evictionDeadline(stale, 20_000, policy)).toBe(23_000);
    expect(dueIds([stale], 22_999, 20_000)).toEqual([]);
    expect(dueIds([stale], 23_000, 20_000)).toEqual(["a"]);
    // A heartbeat after the grace start counts from itself.
    expect(evictionDeadline(inst("b", 21_000), 20_000, policy)).toBe(24_000);
  });

  it("never comes for static instances, which do not count as live", () => {
    const s = inst("static", 0);
    expect(evictionDeadline(s, 0, policy)).toBeNull();
    const plan = planEvictions([s, inst("a", 0)], 1e12, 0, policy);
    expect(plan.due.map((i) => i.instance_id)).toEqual(["a"]);
    expect(plan.live).toBe(1);
  });
});

describe("two clocks: the stamp of the replica that took the heartbeat, the evicting replica's own", () => {
  const MINUTE = 60_000;
  // Heard by the evicting replica at 10,000 on its clock; stamped by a replica `skew` off.
  const stampedBy = (skew: number, id = "a", heardAt = 10_000) => inst(id, heardAt, 1000, { last_heartbeat: heardAt + skew });

  it("a replica 60 s behind took the heartbeat: not evicted before a window on the evictor's clock (it was at once)", () => {
    const behind = stampedBy(-MINUTE);
    expect(evictionDeadline(behind, 0, policy)).toBe(13_000);
    expect(dueIds([behind], 10_001)).toEqual([]);
    expect(dueIds([behind], 12_999)).toEqual([]);
    expect(planEvictions([behind], 11_000, 0, policy).ratio).toBe(0); // not even late
  });

  it("a replica 60 s ahead took the heartbeat: evicted a window after it was heard (it was 60 s late)", () => {
    const ahead = stampedBy(MINUTE);
    expect(evictionDeadline(ahead, 0, policy)).toBe(13_000);
    expect(dueIds([ahead], 13_000)).toEqual(["a"]);
  });

  it("a grace start still pushes the deadline, whichever clock stamped the heartbeat", () => {
    expect(evictionDeadline(stampedBy(-MINUTE), 20_000, policy)).toBe(23_000);
    expect(evictionDeadline(stampedBy(MINUTE), 20_000, policy)).toBe(23_000);
  });

  it("plans the same evictions, ratio and next deadline whatever the stamps' skew", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: -3_600_000, max: 3_600_000 }), fc.integer({ min: 100, max: 10_000 })), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 150_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        (heard, now, graceStart) => {
          const sp: LivenessPolicy = { missedHeartbeats: 3, selfPreservationRatio: 0.5 };
          const same = heard.map(([at, , interval], k) => inst(`i${k}`, at, interval));
          const skewed = heard.map(([at, skew, interval], k) => inst(`i${k}`, at, interval, { last_heartbeat: at + skew }));
          const a = planEvictionsWithNext(same, now, graceStart, sp);
          const b = planEvictionsWithNext(skewed, now, graceStart, sp);
          expect(b.due.map((i) => i.instance_id)).toEqual(a.due.map((i) => i.instance_id));
          expect([b.ratio, b.paused, b.next, b.live]).toEqual([a.ratio, a.paused, a.next, a.live]);
        },
      ),
    );
  });
});

describe("planEvictions", () => {
  it("orders the due instances most overdue first", () => {
    const instances = [inst("late", 5000), inst("latest", 1000), inst("fresh", 9000), inst("later", 2000, 500)];
    // Deadlines: late 8000, latest 4000, later 3500, fresh 12000.
    expect(dueIds(instances, 10_000)).toEqual(["later", "latest", "late"]);
  });

  it("reports the overdue share of live instances", () => {
    const plan = planEvictions([inst("a", 0), inst("b", 0), inst("c", 9000), inst("d", 9000)], 5000, 0, policy);
    expect(plan).toMatchObject({ live: 4, ratio: 0.5, paused: false });
    expect(planEvictions([], 5000, 0, policy)).toEqual({ due: [], live: 0, paused: false, ratio: 0 });
  });

  describe("self-preservation", () => {
    const fleet = (overdue: number, total: number): InstanceState[] =>
      Array.from({ length: total }, (_, i) => inst(`i${i}`, i < overdue ? 0 : 100_000));
    const sp: LivenessPolicy = { missedHeartbeats: 3, selfPreservationRatio: 0.5 };

    it("pauses only when the overdue share is above the ratio", () => {
      expect(planEvictions(fleet(6, 10), 100_000, 0, sp)).toMatchObject({ paused: true, ratio: 0.6 });
      expect(planEvictions(fleet(5, 10), 100_000, 0, sp)).toMatchObject({ paused: false, ratio: 0.5 });
      // The due list is still computed so the caller can report it.
      expect(planEvictions(fleet(6, 10), 100_000, 0, sp).due).toHaveLength(6);
    });

    it("never holds back a fleet of fewer than 10 live instances", () => {
      expect(planEvictions(fleet(9, 9), 100_000, 0, sp).paused).toBe(false);
      expect(planEvictions(fleet(10, 10), 100_000, 0, sp).paused).toBe(true);
    });

    it("is off at ratio 0", () => {
      expect(planEvictions(fleet(10, 10), 100_000, 0, policy).paused).toBe(false);
    });

    it("counts late instances, not only due ones: a fleet on staggered phases falls due one by one", () => {
      // 20 instances heartbeating every 1000 ms on phases 50 ms apart; 15 go silent at 10,000.
      const instances = Array.from({ length: 20 }, (_, i) => inst(`i${i}`, i < 15 ? 9000 + i * 50 : 12_000));
      const firstDue = planEvictions(instances, 12_000, 0, sp);
      expect(firstDue.due.map((i) => i.instance_id)).toEqual(["i0"]);
      expect(firstDue).toMatchObject({ paused: true, ratio: 0.75 });
      // Late but none due yet: nothing to hold back, no alert.
      expect(planEvictions(instances, 11_999, 0, sp)).toMatchObject({ paused: false, ratio: 0.75, due: [] });
      // Heartbeats within 1.5 intervals are not late.
      const healthy = Array.from({ length: 20 }, (_, i) => inst(`i${i}`, i === 0 ? 9000 : 10_600));
      expect(planEvictions(healthy, 12_000, 0, sp)).toMatchObject({ paused: false, ratio: 0.05 });
    });

    it("does not count static instances toward the 10", () => {
      const instances = [...fleet(9, 9), inst("static", 0)];
      expect(planEvictions(instances, 100_000, 0, sp)).toMatchObject({ live: 9, paused: false });
    });
  });

  it("never finds an instance due that heartbeats at least every interval", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120_000 }),
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 0, max: 1e9 }),
        fc.integer({ min: 0, max: 1e9 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 30 }),
        (interval, missed, start, graceStart, gaps) => {
          const p: LivenessPolicy = { missedHeartbeats: missed, selfPreservationRatio: 0 };
          let last = start;
          for (const g of gaps) {
            // Checked anywhere up to the next heartbeat, which comes within one interval.
            const gap = Math.floor(g * interval);
            const now = last + gap;
            if (planEvictions([inst("a", last, interval)], now, graceStart, p).due.length > 0) return false;
            last = now;
          }
          return true;
        },
      ),
    );
  });

  it("finds an instance due once its window has passed with no heartbeat", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 120_000 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 1e9 }), (interval, missed, last) => {
        const p: LivenessPolicy = { missedHeartbeats: missed, selfPreservationRatio: 0 };
        const deadline = last + missed * interval;
        return (
          planEvictions([inst("a", last, interval)], deadline - 1, 0, p).due.length === 0 &&
          planEvictions([inst("a", last, interval)], deadline, 0, p).due.length === 1
        );
      }),
    );
  });
});
