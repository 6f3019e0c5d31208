import { describe, expect, it } from "vitest";
import { HeartbeatCoalescer } from "../../../../src/service/liveness/heartbeat-coalescer.js";
import type { HeartbeatMessage } from "../../../../src/domain/messages.js";

/** A write the test completes by hand, recording what was written. */
function controlledWrites(maxWrites?: number) {
  const writes: Array<{ key: string; msg: HeartbeatMessage; done: (rev: number) => void; fail: (e: unknown) => void }> = [];
  const write = (t: string, i: string, msg: HeartbeatMessage) =>
    new Promise<number>((resolve, reject) => writes.push({ key: `${t}/${i}`, msg, done: resolve, fail: reject }));
  return { writes, coalescer: new HeartbeatCoalescer<number>(write, maxWrites) };
}
const tick = () => new Promise((r) => setImmediate(r));

describe("HeartbeatCoalescer", () => {
  it("writes one heartbeat per instance at a time; those that overlap share the next write, latest fields winning", async () => {
    const { writes, coalescer } = controlledWrites();
    const first = coalescer.heartbeat("a", "i1", { status: "ready" });
    const joined = [
      coalescer.heartbeat("a", "i1", { active_tasks: 1 }),
      coalescer.heartbeat("a", "i1", { status: "draining" }),
      coalescer.heartbeat("a", "i1", { active_tasks: 3 }),
    ];
    expect(writes).toHaveLength(1);
    writes[0]!.done(10);
    expect(await first).toBe(10);
    await tick();
    expect(writes).toHaveLength(2);
    expect(writes[1]!.msg).toEqual({ active_tasks: 3, status: "draining" });
    writes[1]!.done(11);
    expect(await Promise.all(joined)).toEqual([11, 11, 11]);
    expect(coalescer.inFlight).toBe(0);
  });

  it("keeps instances apart", () => {
    const { writes, coalescer } = controlledWrites();
    void coalescer.heartbeat("a", "i1", {});
    void coalescer.heartbeat("a", "i2", {});
    void coalescer.heartbeat("b", "i1", {});
    expect(writes.map((w) => w.key)).toEqual(["a/i1", "a/i2", "b/i1"]);
  });

  it("gives the joiners the failure of their write, and frees the slot after a failure", async () => {
    const { writes, coalescer } = controlledWrites();
    const first = coalescer.heartbeat("a", "i1", {});
    const joined = coalescer.heartbeat("a", "i1", {});
    writes[0]!.fail(new Error("store away"));
    await expect(first).rejects.toThrow("store away");
    await tick();
    writes[1]!.fail(new Error("still away"));
    await expect(joined).rejects.toThrow("still away");
    expect(coalescer.inFlight).toBe(0);
    const again = coalescer.heartbeat("a", "i1", {});
    writes[2]!.done(5);
    expect(await again).toBe(5);
  });

  it("refuses a heartbeat of one more instance past maxWrites, never one joining a write in flight, and takes them again once a write ends", async () => {
    const { writes, coalescer } = controlledWrites(2);
    const first = coalescer.heartbeat("a", "i1", {});
    const second = coalescer.heartbeat("a", "i2", {});
    expect(coalescer.heartbeat("a", "i3", {})).toBeNull();
    // Joining costs the store nothing: not refused, and answered by the next write of i1.
    const joined = coalescer.heartbeat("a", "i1", { active_tasks: 2 });
    expect(joined).not.toBeNull();
    expect(writes.map((w) => w.key)).toEqual(["a/i1", "a/i2"]);
    writes[1]!.done(7);
    expect(await second).toBe(7);
    await tick();
    expect(coalescer.inFlight).toBe(1);
    const third = coalescer.heartbeat("a", "i3", {});
    expect(third).not.toBeNull();
    // i1's slot stays taken while the write that joined it runs: still two in flight.
    writes[0]!.done(8);
    expect(await first).toBe(8);
    await tick();
    expect(writes.map((w) => w.key)).toEqual(["a/i1", "a/i2", "a/i3", "a/i1"]);
    expect(coalescer.heartbeat("a", "i4", {})).toBeNull();
    writes[3]!.fail(new Error("timed out"));
    await expect(joined).rejects.toThrow("timed out");
    await tick();
    expect(coalescer.heartbeat("a", "i4", {})).not.toBeNull();
    writes[2]!.done(9);
    expect(await third).toBe(9);
  });
});
