import { describe, expect, it } from "vitest";
import { LiveHistory } from "../../src/ui/web/live-history.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, s)).toISOString();
const ms = (s: number) => Date.parse(at(s));
const registered = (s: number, first: boolean) => ({ type: "registry.agent.registered", time: at(s), data: { first_instance: first } });
const deregistered = (s: number, last: boolean, reason = "graceful") => ({ type: "registry.agent.deregistered", time: at(s), data: { agent_removed: last, reason } });

describe("LiveHistory", () => {
  it("walks back from the counts now through the events before the first sample", () => {
    const h = new LiveHistory();
    // a: first instance of type A; b: a second instance of A; c: type C; then b leaves, then C's only one (evicted).
    for (const e of [registered(10, true), registered(20, false), registered(30, true), deregistered(40, false), deregistered(50, true, "evicted")]) h.add(e);
    // After all five: 1 instance of 1 type. The page opened at 60 s; the range starts at 0 s.
    expect(h.before(ms(60), { instances: 1, types: 1 }, ms(0))).toEqual([
      { at: ms(0), instances: 0, types: 0 },
      { at: ms(10), instances: 1, types: 1 },
      { at: ms(20), instances: 2, types: 1 },
      { at: ms(30), instances: 3, types: 2 },
      { at: ms(40), instances: 2, types: 2 },
      { at: ms(50), instances: 1, types: 1 },
    ]);
  });

  it("leaves out events at or after the first sample (the samples hold them) and before the range, in any arrival order", () => {
    const h = new LiveHistory();
    for (const e of [registered(70, true), registered(5, true), registered(30, true)]) h.add(e);
    expect(h.before(ms(60), { instances: 2, types: 2 }, ms(10))).toEqual([
      { at: ms(10), instances: 1, types: 1 },
      { at: ms(30), instances: 2, types: 2 },
    ]);
  });

  it("never goes below zero when the events begin after what was live (an older stream was trimmed)", () => {
    const h = new LiveHistory();
    h.add(registered(20, true));
    h.add(registered(30, true));
    expect(h.before(ms(60), { instances: 1, types: 1 }, ms(0))[0]).toEqual({ at: ms(0), instances: 0, types: 0 });
  });

  it("ignores other event types and unreadable times", () => {
    const h = new LiveHistory();
    h.add({ type: "registry.agent.status_changed", time: at(10), data: {} });
    h.add({ type: "registry.agent.registered", time: "not a time", data: { first_instance: true } });
    expect(h.before(ms(60), { instances: 4, types: 2 }, ms(0))).toEqual([{ at: ms(0), instances: 4, types: 2 }]);
  });
});
