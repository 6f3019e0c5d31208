import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MinHeap, type HeapItem } from "../../../../src/domain/min-heap.js";
import { MIN_REVISION_WAIT_MS, RevisionWaiters, reachRevision, type RevisionWait } from "../../../../src/service/view/revision-waiters.js";
import { ErrorCode } from "../../../../src/domain/errors.js";

describe("MinHeap", () => {
  it("pops in key order whatever was pushed and removed in between (property)", () => {
    const op = fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 50 }) }), fc.record({ remove: fc.nat() }), fc.constant({ pop: true as const }));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const heap = new MinHeap<HeapItem>();
        let held: HeapItem[] = [];
        for (const o of ops) {
          if ("push" in o) {
            const item = { key: o.push, heapIndex: -1 };
            heap.push(item);
            held.push(item);
          } else if ("remove" in o) {
            const item = held[o.remove % Math.max(1, held.length)];
            if (item) heap.remove(item);
            held = held.filter((h) => h !== item);
            if (item) heap.remove(item); // twice: the second time changes nothing
          } else {
            const top = heap.pop();
            expect(top?.key).toBe(held.length === 0 ? undefined : Math.min(...held.map((h) => h.key)));
            held = held.filter((h) => h !== top);
          }
          expect(heap.size).toBe(held.length);
        }
        const rest: number[] = [];
        for (let top = heap.pop(); top; top = heap.pop()) rest.push(top.key);
        expect(rest).toEqual(held.map((h) => h.key).sort((a, b) => a - b));
      }),
      { numRuns: 500 },
    );
  });
});

describe("RevisionWaiters", () => {
  afterEach(() => vi.useRealTimers());

  it("wakes exactly the waiters at or below the applied revision, and none of the others", async () => {
    const waiters = new RevisionWaiters(100_000);
    const outcomes = new Map<number, RevisionWait>();
    const all = Array.from({ length: 20_000 }, (_, i) => {
      const revision = 1 + ((i * 7919) % 20_000);
      return waiters.wait(revision, 60_000).then((o) => void outcomes.set(revision, o));
    });
    waiters.reached(5_000);
    await new Promise((r) => setImmediate(r));
    expect(outcomes.size).toBe(5_000);
    expect([...outcomes.keys()].every((r) => r <= 5_000)).toBe(true);
    expect(waiters.size).toBe(15_000);
    waiters.cancelAll();
    await Promise.all(all);
    expect([...outcomes.values()].filter((o) => o === "timed_out")).toHaveLength(15_000);
    expect(waiters.size).toBe(0);
  });

  it("refuses a wait at once past its bound, and takes one again when a waiter times out", async () => {
    vi.useFakeTimers();
    const waiters = new RevisionWaiters(2);
    const first = waiters.wait(10, 100);
    const second = waiters.wait(10, 5_000);
    expect(await waiters.wait(10, 5_000)).toBe("full");
    vi.advanceTimersByTime(100);
    expect(await first).toBe("timed_out");
    expect(waiters.size).toBe(1);
    const third = waiters.wait(11, 5_000);
    waiters.reached(11);
    expect([await second, await third]).toEqual(["reached", "reached"]);
  });
});

describe("reachRevision", () => {
  it("returns once the view reaches the revision, waiting MIN_REVISION_WAIT_MS at most", async () => {
    const asked: Array<[number, number]> = [];
    await reachRevision(async (revision, timeoutMs) => (asked.push([revision, timeoutMs]), "reached"), () => 7, 9);
    expect(asked).toEqual([[9, MIN_REVISION_WAIT_MS]]);
  });

  it("throws stale_view naming the view's revision, whether the wait timed out or was refused as one too many", async () => {
    await expect(reachRevision(async () => "timed_out", () => 7, 9)).rejects.toMatchObject({
      code: ErrorCode.StaleView,
      message: `this replica's view is at revision 7; min_revision 9 not reached in ${MIN_REVISION_WAIT_MS} ms`,
    });
    await expect(reachRevision(async () => "full", () => 7, 9)).rejects.toMatchObject({
      code: ErrorCode.StaleView,
      message: "this replica's view is at revision 7; too many queries are waiting for a revision here to wait for min_revision 9",
    });
  });
});
