/**
 * The payload check of tasks_delegate (PROTOCOL.md sections 11.4 and 13): every problem with a
 * path inside the tool's arguments, A2A messages through their first data part, draft 2020-12
 * when a schema says so, and patterns on the linear-time engine (a pattern that backtracks for
 * seconds in V8 answers at once).
 */
import { describe, expect, it, vi } from "vitest";
import { Ajv } from "ajv";
import { PayloadChecker, checkedValue } from "../../../../src/domain/spec/payload-check.js";

const checker = new PayloadChecker();

const schema = {
  type: "object",
  properties: {
    text: { type: "string", minLength: 1 },
    items: { type: "array", items: { type: "object", required: ["id"], properties: { id: { type: "integer" } } } },
    "a/b": { type: "number" },
  },
  required: ["text"],
  additionalProperties: false,
};

describe("PayloadChecker", () => {
  it("accepts a valid payload, and anything under {} or true", () => {
    expect(checker.check(schema, { text: "hi", items: [{ id: 1 }] })).toEqual([]);
    expect(checker.check({}, "anything")).toEqual([]);
    expect(checker.check(true, [1, 2])).toEqual([]);
  });

  it("lists every problem, each at its path inside the tool's arguments", () => {
    expect(checker.check(schema, { items: [{ id: "x" }, {}], extra: 1, "a/b": "n" })).toEqual(
      expect.arrayContaining([
        { path: "payload.text", message: "must have required property 'text'" },
        { path: "payload.extra", message: "must NOT have additional properties" },
        { path: "payload.items.0.id", message: "must be integer" },
        { path: "payload.items.1.id", message: "must have required property 'id'" },
        { path: "payload.a/b", message: "must be number" },
      ]),
    );
    expect(checker.check(false, {})).toEqual([{ path: "payload", message: "the capability's input schema accepts nothing" }]);
  });

  it("checks an A2A message through its first data part (v0.3 and v1.0 forms), and says when there is none", () => {
    const v03 = { role: "user", parts: [{ kind: "text", text: "hi" }, { kind: "data", data: { text: "" } }] };
    expect(checker.check(schema, v03)).toEqual([{ path: "payload.parts.1.data.text", message: "must NOT have fewer than 1 characters" }]);
    const v10 = { role: "ROLE_USER", parts: [{ data: { text: "ok" } }] };
    expect(checker.check(schema, v10)).toEqual([]);
    expect(checkedValue({ parts: [{ kind: "text", text: "x" }] })).toEqual({
      problem: { path: "payload.parts", message: "an A2A message is checked through its first data part, and this one has none" },
    });
  });

  it("reads a schema that declares 2020-12 as 2020-12", () => {
    const tuple = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }, { type: "integer" }], items: false };
    expect(checker.check(tuple, ["a", 1])).toEqual([]);
    expect(checker.check(tuple, ["a", "b"]).map((i) => i.path)).toEqual(["payload.1"]);
    expect(checker.check(tuple, ["a", 1, 2]).length).toBeGreaterThan(0);
  });

  it("matches patterns on the linear-time engine (V8's backtracking one would not finish this within the test's timeout)", () => {
    const evil = { type: "string", pattern: "^(a+)+b$" };
    expect(checker.check(evil, `${"a".repeat(40)}c`)).toEqual([{ path: "payload", message: 'must match pattern "^(a+)+b$"' }]);
    expect(checker.check(evil, `${"a".repeat(40)}b`)).toEqual([]);
  });

  it("prepares a check against a schema sent as its JSON text that answers as check does, compiling each text once", () => {
    const text = JSON.stringify(schema);
    const own = new PayloadChecker();
    const compile = vi.spyOn(Ajv.prototype, "compile");
    try {
      for (const payload of [{ text: "hi" }, { items: [{ id: "x" }] }, { parts: [{ kind: "text", text: "x" }] }, { parts: [{ data: { text: "" } }] }]) {
        expect(own.prepare(text)(payload, "input")).toEqual(checker.check(schema, payload, "input"));
      }
      expect(own.prepare("false")({}, "output")).toEqual([{ path: "payload", message: "the capability's output schema accepts nothing" }]);
      expect(own.prepare("{}")("anything")).toEqual([]);
      // `checker` had compiled the schema before; `own` compiled it once for all its checks.
      expect(compile).toHaveBeenCalledTimes(1);
    } finally {
      compile.mockRestore();
    }
  });

  it("keeps working past its cache and its ajv instances' compile budget, with schemas sharing an $id", () => {
    for (let i = 0; i < 130; i++) {
      const s = { $id: "https://example.com/same", type: "object", properties: { n: { const: i } }, required: ["n"] };
      expect(checker.check(s, { n: i })).toEqual([]);
      expect(checker.check(s, { n: -1 })).toHaveLength(1);
    }
  });
});
