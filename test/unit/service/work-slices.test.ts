/**
 * Work on the event loop in charged slices (service/work-slices.ts), on a clock the test
 * moves: the loop gets a turn once a slice has run its time, every slice is charged, a wait
 * for I/O is not, and a charge that throws stops the work there.
 */
import { describe, expect, it } from "vitest";
import { WorkSlices } from "../../../src/service/work-slices.js";

describe("WorkSlices", () => {
  it("gives the loop a turn once a slice has run its time, and charges each slice", async () => {
    const clock = { t: 0 };
    const charged: number[] = [];
    const slices = new WorkSlices({ now: () => clock.t, sliceMs: 4, charge: (ms) => charged.push(ms) });
    const turns: number[] = [];
    clock.t = 3;
    expect(slices.next()).toBeUndefined();
    clock.t = 5;
    setImmediate(() => turns.push(clock.t));
    const turn = slices.next();
    expect(turn).toBeInstanceOf(Promise);
    expect(turns).toEqual([]);
    await turn;
    expect(turns).toEqual([5]); // what waited for the loop ran before the next slice
    clock.t = 7;
    slices.finish();
    expect(charged).toEqual([5, 2]);
    expect(slices.chargedMs).toBe(7);
  });

  it("does not charge the time spent waiting for I/O", async () => {
    const clock = { t: 0 };
    const charged: number[] = [];
    const slices = new WorkSlices({ now: () => clock.t, charge: (ms) => charged.push(ms) });
    clock.t = 1;
    const value = await slices.off(async () => {
      clock.t = 1000; // a slow store read
      return "read";
    });
    expect(value).toBe("read");
    clock.t = 1002;
    slices.finish();
    expect(charged).toEqual([1, 2]);
  });

  it("stops the work where the charge throws", () => {
    const clock = { t: 0 };
    const slices = new WorkSlices({
      now: () => clock.t,
      charge: () => {
        throw new Error("budget spent");
      },
    });
    clock.t = 10;
    expect(() => slices.next()).toThrow("budget spent");
  });
});
