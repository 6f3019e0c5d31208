import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StatusDamper } from "../../../../src/service/liveness/status-damper.js";
import type { InstanceStatus } from "../../../../src/protocol/states.js";

let t = 0;
let flushed: Array<[string, string, InstanceStatus]>;
let held: number;
let damper: StatusDamper;
beforeEach(() => {
  vi.useFakeTimers();
  t = 0;
  flushed = [];
  held = 0;
  damper = new StatusDamper({ windowMs: 1000, clock: { now: () => t }, flush: (a, i, s) => flushed.push([a, i, s]), onHeld: () => held++ });
});
afterEach(() => {
  damper.stop();
  vi.useRealTimers();
});
const advance = async (ms: number) => {
  t += ms;
  await vi.advanceTimersByTimeAsync(ms);
};

describe("StatusDamper", () => {
  it("lets the first change through, holds the next ones within the window and writes the latest when it ends", async () => {
    expect(damper.admit("a", "i", "ready", "draining")).toBe("draining");
    damper.changed("a", "i");
    await advance(100);
    expect(damper.admit("a", "i", "draining", "ready")).toBe("draining");
    expect(damper.admit("a", "i", "draining", "registered")).toBe("draining");
    expect(held).toBe(2);
    await advance(899);
    expect(flushed).toEqual([]);
    await advance(1);
    expect(flushed).toEqual([["a", "i", "registered"]]);
  });

  it("writes nothing when the instance came back to its stored status within the window", async () => {
    damper.admit("a", "i", "ready", "draining");
    damper.changed("a", "i");
    expect(damper.admit("a", "i", "draining", "ready")).toBe("draining");
    expect(damper.admit("a", "i", "draining", "draining")).toBe("draining");
    await advance(2000);
    expect(flushed).toEqual([]);
  });

  it("leaves other instances, and heartbeats without a status, alone", () => {
    damper.changed("a", "i");
    expect(damper.admit("a", "other", "ready", "draining")).toBe("draining");
    expect(damper.admit("a", "i", "ready", undefined)).toBe("ready");
    expect(held).toBe(0);
  });

  it("forgets instances whose window passed (bounded memory)", async () => {
    for (let i = 0; i < 100; i++) damper.changed("a", `i${i}`);
    expect(damper.size).toBe(100);
    await advance(20_000);
    expect(damper.size).toBe(0);
  });

  it("does nothing with a window of 0", () => {
    const off = new StatusDamper({ windowMs: 0, clock: { now: () => t }, flush: () => flushed.push(["x", "x", "ready"]) });
    off.changed("a", "i");
    expect(off.admit("a", "i", "ready", "draining")).toBe("draining");
    expect(off.size).toBe(0);
    off.stop();
  });
});
