/**
 * Unknown fields in a query body (src/service/messages.ts parseMessage): ignored while the body
 * is valid, so a newer client's extra field does not break an older registry; named, with the
 * field most likely meant, when the body is refused, so a misspelling is not reported as a
 * missing field.
 */
import { describe, expect, it } from "vitest";
import { RegistryError } from "../../../src/domain/errors.js";
import { graphQuery, lookupQuery, parseMessage } from "../../../src/domain/messages.js";

function refusal(schema: Parameters<typeof parseMessage>[0], body: unknown): RegistryError {
  try {
    parseMessage(schema, body, "lookup");
  } catch (e) {
    if (e instanceof RegistryError) return e;
    throw e;
  }
  throw new Error("the body was accepted");
}

describe("unknown fields of a query", () => {
  it("names a misspelled field, with the one it most likely meant, before the missing one", () => {
    const e = refusal(lookupQuery, { capabilty: "text.summarize" });
    expect(e.code).toBe("invalid_request");
    expect(e.issues?.[0]).toEqual({ path: "capabilty", message: "unknown field; did you mean capability?" });
    expect(e.issues?.[1]?.path).toBe("capability");
    expect(e.message).toMatch(/^lookup: capabilty: unknown field; did you mean capability\?/);
  });

  it("names a field nothing resembles as unknown", () => {
    expect(refusal(lookupQuery, { frobnicate: 1 }).issues?.[0]).toEqual({ path: "frobnicate", message: "unknown field" });
    expect(refusal(graphQuery, { dept: 3, direction: "up" }).issues?.[0]).toEqual({ path: "dept", message: "unknown field; did you mean depth?" });
  });

  it("ignores unknown fields of a valid body, as newer clients may send them", () => {
    expect(parseMessage(lookupQuery, { capability: "text.summarize", added_in_v9: true }, "lookup")).toEqual({ capability: "text.summarize" });
  });

  it("names at most five, and cuts long names", () => {
    const body = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`x${i}`.padEnd(300, "y"), i]));
    const issues = refusal(lookupQuery, body).issues ?? [];
    const unknown = issues.filter((i) => i.message.startsWith("unknown field"));
    expect(unknown).toHaveLength(5);
    for (const i of unknown) expect(i.path.length).toBeLessThanOrEqual(128);
  });
});
