import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { heartbeatMessage } from "../../../src/domain/messages.js";
import { parseHeartbeatMessage, parseMessage } from "../../../src/domain/messages.js";
import { thrownRegistryError } from "../registry-error.js";

/** What the zod schema alone answers: the parsed message, or the error's code and message. */
function bySchema(body: Record<string, unknown>): unknown {
  try {
    return parseMessage(heartbeatMessage, body, "heartbeat");
  } catch {
    const e = thrownRegistryError(() => parseMessage(heartbeatMessage, body, "heartbeat"));
    return { code: e.code, message: e.message, issues: e.issues };
  }
}

function byFastPath(body: Record<string, unknown>): unknown {
  try {
    return parseHeartbeatMessage(body);
  } catch {
    const e = thrownRegistryError(() => parseHeartbeatMessage(body));
    return { code: e.code, message: e.message, issues: e.issues };
  }
}

describe("parseHeartbeatMessage", () => {
  it("reads the common shapes without changing them", () => {
    expect(parseHeartbeatMessage({})).toStrictEqual({});
    expect(parseHeartbeatMessage({ status: "draining" })).toStrictEqual({ status: "draining" });
    expect(parseHeartbeatMessage({ active_tasks: 3 })).toStrictEqual({ active_tasks: 3 });
    expect(parseHeartbeatMessage({ status: "ready", active_tasks: 0 })).toStrictEqual({ status: "ready", active_tasks: 0 });
  });

  it("refuses what the schema refuses, with the schema's words", () => {
    for (const body of [{ status: "gone" }, { active_tasks: -1 }, { active_tasks: 1.5 }, { active_tasks: "2" }, { status: null }]) {
      const e = thrownRegistryError(() => parseHeartbeatMessage(body));
      expect(e.code).toBe("invalid_request");
      expect(byFastPath(body)).toStrictEqual(bySchema(body));
    }
  });

  it("gives the zod schema's answer for any body (property)", () => {
    const value = fc.oneof(
      fc.constantFrom("ready", "draining", "registered", "READY", "", "gone"),
      fc.integer({ min: -5, max: 2 ** 53 + 2 }),
      fc.double(),
      fc.constant(Number.MAX_SAFE_INTEGER + 2),
      fc.constant(-0),
      fc.constant(null),
      fc.boolean(),
      fc.string(),
    );
    const body = fc.dictionary(fc.constantFrom("status", "active_tasks", "extra", "statuses"), value);
    fc.assert(
      fc.property(body, (b) => {
        expect(byFastPath(b)).toStrictEqual(bySchema(b));
      }),
      { numRuns: 2000 },
    );
  });
});
