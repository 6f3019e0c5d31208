import { describe, expect, it } from "vitest";
import { guarded } from "../../../src/kit/guarded.js";
import { captureLogs } from "../../harness/registry.js";

describe("guarded", () => {
  it("logs a job that throws or rejects instead of letting it end the process, and rate-limits the log", async () => {
    const { logger, lines } = captureLogs();
    const throwing = guarded(logger, "sync job", () => {
      throw new TypeError("Cannot create property 'input_schema' on string 'a'");
    });
    expect(() => throwing()).not.toThrow();
    throwing();
    guarded(logger, "async job", () => Promise.reject(new Error("store away")))();
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l["job"], (l["err"] as { message: string }).message])).toEqual([
      ["sync job", "Cannot create property 'input_schema' on string 'a'"],
      ["async job", "store away"],
    ]);
  });
});
