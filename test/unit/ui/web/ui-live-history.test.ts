import { describe, expect, it } from "vitest";
import { LiveHistory } from "../../../../src/ui/web/live-history.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, s)).toISOString();
const ms = (s: number) => Date.parse(at(s));
const registered = (s: number, first: boolean, status?: string, extra: Record<string, unknown> = {}) => ({ type: "registry.agent.registered", time: at(s), data: { first_instance: first, ...(status ? { status } : {}), ...extra } });
const deregistered = (s: number, last: boolean, status?: string) => ({ type: "registry.agent.deregistered", time: at(s), data: { agent_removed: last, reason: "graceful", ...(status ? { status } : {}) } });
const changed = (s: number, from: string, to: string) => ({ type: "registry.agent.status_changed", time: at(s), data: { from, to } });
const none = { ready: 0, registered: 0, draining: 0 };
/** A first sample from a registry that gives no revision: events are held by time. */
const byTime = (s: number) => ({ at: ms(s), revision: null });

describe("LiveHistory", () => {
  it("walks back from the counts now through the events before the first sample, by status too", () => {
    const h = new LiveHistory();
    // a: type A's first instance; b: a second of A, registered then ready; c: type C; then b leaves, then C's only one.
    for (const e of [registered(10, true, "ready"), registered(20, false, "registered"), changed(25, "registered", "ready"), registered(30, true, "ready"), deregistered(40, false, "ready"), deregistered(50, true, "ready")]) h.add(e);
    // After all of them: instance a, ready, of type A. The page opened at 60 s; the range starts at 0 s.
    expect(h.before(byTime(60), { instances: 1, types: 1, byStatus: { ...none, ready: 1 } }, ms(0))).toEqual([
      { at: ms(0), instances: 0, types: 0, byStatus: none },
      { at: ms(10), instances: 1, types: 1, byStatus: { ...none, ready: 1 } },
      { at: ms(20), instances: 2, types: 1, byStatus: { ...none, ready: 1, registered: 1 } },
      { at: ms(25), instances: 2, types: 1, byStatus: { ...none, ready: 2 } },
      { at: ms(30), instances: 3, types: 2, byStatus: { ...none, ready: 3 } },
      { at: ms(40), instances: 2, types: 2, byStatus: { ...none, ready: 2 } },
      { at: ms(50), instances: 1, types: 1, byStatus: { ...none, ready: 1 } },
    ]);
  });

  it("adds no instance for a live one that overwrote its spec (new_instance false)", () => {
    const h = new LiveHistory();
    h.add(registered(10, true, "ready"));
    h.add(registered(20, false, "ready", { replaced: true, new_instance: false }));
    expect(h.before(byTime(60), { instances: 1, types: 1, byStatus: { ...none, ready: 1 } }, ms(0)).map((p) => p.instances)).toEqual([0, 1, 1]);
  });

  it("stops the counts by status at an event stored before v1.2 (no status), the totals going on", () => {
    const h = new LiveHistory();
    h.add(registered(10, true));
    h.add(registered(20, true, "ready"));
    const points = h.before(byTime(60), { instances: 2, types: 2, byStatus: { ...none, ready: 2 } }, ms(0));
    expect(points.map((p) => [p.instances, p.byStatus])).toEqual([
      [0, null],
      [1, { ...none, ready: 1 }],
      [2, { ...none, ready: 2 }],
    ]);
  });

  it("leaves out events at or after the first sample and before the range, in any arrival order, and never goes below zero", () => {
    const h = new LiveHistory();
    for (const e of [registered(70, true, "ready"), registered(5, true, "ready"), registered(30, true, "ready")]) h.add(e);
    expect(h.before(byTime(60), { instances: 2, types: 2, byStatus: { ...none, ready: 2 } }, ms(10)).map((p) => [p.at, p.instances])).toEqual([
      [ms(10), 1],
      [ms(30), 2],
    ]);
    const trimmed = new LiveHistory();
    trimmed.add(registered(20, true, "ready"));
    trimmed.add(registered(30, true, "ready"));
    expect(trimmed.before(byTime(60), { instances: 1, types: 1, byStatus: { ...none, ready: 1 } }, ms(0))[0]).toEqual({ at: ms(0), instances: 0, types: 0, byStatus: none });
  });

  it("holds the events up to the sample's revision, whatever their times (one applied after the counting is not in them)", () => {
    const h = new LiveHistory();
    h.add({ ...registered(10, true, "ready"), data: { first_instance: true, status: "ready", revision: 5 } });
    // Stored at 20 s, before the sample's 30 s, but applied by the view after it counted at revision 5.
    h.add({ ...registered(20, true, "ready"), data: { first_instance: true, status: "ready", revision: 6 } });
    expect(h.before({ at: ms(30), revision: 5 }, { instances: 1, types: 1, byStatus: { ...none, ready: 1 } }, ms(0)).map((p) => [p.at, p.instances])).toEqual([
      [ms(0), 0],
      [ms(10), 1],
    ]);
  });

  it("ignores other event types and unreadable times", () => {
    const h = new LiveHistory();
    h.add({ type: "registry.capability.changed", time: at(10), data: {} });
    h.add({ type: "registry.agent.registered", time: "not a time", data: { first_instance: true } });
    expect(h.before(byTime(60), { instances: 4, types: 2, byStatus: { ...none, ready: 4 } }, ms(0))).toEqual([{ at: ms(0), instances: 4, types: 2, byStatus: { ...none, ready: 4 } }]);
  });
});
