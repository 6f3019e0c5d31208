/**
 * How the MCP front coalesces capability changes into `notifications/resources/updated`
 * (src/mcp/capability-watch.ts): once per quiet period, and never later than the maximum wait
 * after the first change not yet reported, however steadily the changes keep coming.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coalesceChanges } from "../../../src/mcp/capability-watch.js";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("coalesceChanges", () => {
  it("reports a burst once, after the quiet period", () => {
    const fired: number[] = [];
    const c = coalesceChanges(() => fired.push(Date.now()), 100, 1000);
    const start = Date.now();
    for (let i = 0; i < 5; i++) {
      c.changed();
      vi.advanceTimersByTime(10);
    }
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([start + 40 + 100]);
  });

  it("reports within the maximum wait while changes never stop, then again for the next ones", () => {
    const fired: number[] = [];
    const c = coalesceChanges(() => fired.push(Date.now()), 100, 1000);
    const start = Date.now();
    // A change every 50 ms for 6 s: never a quiet 100 ms.
    for (let t = 0; t < 6000; t += 50) {
      c.changed();
      vi.advanceTimersByTime(50);
    }
    expect(fired.length).toBeGreaterThanOrEqual(5);
    expect(fired[0]! - start).toBeLessThanOrEqual(1000);
    for (let i = 1; i < fired.length; i++) expect(fired[i]! - fired[i - 1]!).toBeLessThanOrEqual(1050);
    c.stop();
  });

  it("reports nothing after stop", () => {
    const fired: number[] = [];
    const c = coalesceChanges(() => fired.push(Date.now()), 100, 1000);
    c.changed();
    c.stop();
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
  });
});
