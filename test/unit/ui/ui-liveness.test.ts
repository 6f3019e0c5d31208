/** The page's one liveness rule (src/ui/liveness.ts), shared by the summary strip and the instance rows. */
import { describe, expect, it } from "vitest";
import { livenessOf } from "../../../src/ui/liveness.js";

describe("livenessOf", () => {
  it("is on time up to one interval, late up to two, critical after", () => {
    expect(livenessOf(0, 1000)).toBe("on_time");
    expect(livenessOf(1000, 1000)).toBe("on_time");
    expect(livenessOf(1001, 1000)).toBe("late");
    expect(livenessOf(2000, 1000)).toBe("late");
    expect(livenessOf(2001, 1000)).toBe("critical");
  });
  it("calls an instance with no usable interval on time rather than guessing", () => {
    expect(livenessOf(5000, 0)).toBe("on_time");
    expect(livenessOf(5000, Number.NaN)).toBe("on_time");
  });
  it("takes a heartbeat stamped ahead of the clock (skew) as on time", () => {
    expect(livenessOf(-500, 1000)).toBe("on_time");
  });
});
