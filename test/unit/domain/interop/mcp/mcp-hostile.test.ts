/**
 * Tool specs meant to hurt: deep nesting, enormous lists and strings, `__proto__` and
 * `constructor` keys, remote `$ref`s. Import refuses what it must itself (invalid_card, no
 * stack overflow, no prototype pollution); the spec's own validation, with the repo's schema
 * checker, refuses the rest (invalid_spec); export, which reads stored specs, survives them too.
 */
import { describe, expect, it } from "vitest";
import { exportToolspec, importToolspec, MAX_TOOLSPEC_DEPTH, type ToolspecRegisterBody } from "../../../../../src/domain/interop/mcp/index.js";
import { ErrorCode, RegistryError } from "../../../../../src/domain/errors.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";
import type { Capability } from "../../../../../src/domain/spec/spec.js";

const checker = new SchemaChecker();
const OBJECT = { type: "object" };
const body = (tools: unknown[]): ToolspecRegisterBody => ({ mcp_toolspec: { tools }, description: "hostile", version: "1.0.0", owner_team: "t" });
const importTools = (tools: unknown[]) => importToolspec(body(tools), { agentType: "srv" });
/** A tool spec as the wire delivers it: JSON.parse makes `__proto__` an own key, as an attacker would send it. */
const fromWire = (json: string) => importToolspec({ ...body([]), mcp_toolspec: JSON.parse(json) }, { agentType: "srv" });

function thrown(run: () => unknown): RegistryError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(RegistryError);
    return e as RegistryError;
  }
  throw new Error("expected a RegistryError");
}

/** `{"a": {"a": ... leaf}}`, built without recursion. */
function nested(levels: number, key = "a", leaf: Record<string, unknown> = { type: "string" }): Record<string, unknown> {
  let node = leaf;
  for (let i = 0; i < levels; i++) node = { [key]: node };
  return node;
}

describe("deep nesting", () => {
  it("refuses a tool key nested 100,000 levels deep without overflowing the stack", () => {
    const err = thrown(() => importTools([{ name: "a", inputSchema: OBJECT, _meta: nested(100_000) }]));
    expect(err.code).toBe(ErrorCode.InvalidCard);
    expect(err.issues![0]!.message).toMatch(new RegExp(`the limit is ${MAX_TOOLSPEC_DEPTH}`));
    expect(err.issues![0]!.path).toMatch(/^mcp_toolspec\.tools\.0\._meta(\.a)+$/);
  });

  it("refuses an inputSchema nested past the limit as invalid_card, and imports one under it", () => {
    const tooDeep = { type: "object", properties: { p: nested(MAX_TOOLSPEC_DEPTH, "not") } };
    expect(thrown(() => importTools([{ name: "a", inputSchema: tooDeep }])).code).toBe(ErrorCode.InvalidCard);
    // The schema sits 4 levels down the tool spec (tools, tool, inputSchema, properties).
    const deepButFine = { type: "object", properties: { p: nested(MAX_TOOLSPEC_DEPTH - 8, "not") } };
    expect(validateSpec(importTools([{ name: "a", inputSchema: deepButFine }]).spec, checker).spec.capabilities).toHaveLength(1);
  });

  it("exports a stored schema 100,000 levels deep (wrapped and rebased) without overflowing the stack", () => {
    const deep = nested(100_000, "not");
    const cap: Capability = { name: "a", description: "a", input_schema: { type: "array", items: deep }, output_schema: { type: "string", not: deep }, tags: [], examples: [] };
    const [tool] = exportToolspec({ capabilities: [cap] }).tools;
    expect(tool!.inputSchema).toMatchObject({ type: "object", required: ["payload"] });
    expect(tool!.outputSchema).toMatchObject({ type: "object", required: ["payload"] });
  });
});

describe("enormous input", () => {
  it("refuses a list of a million tools by its length, before reading any tool", () => {
    const tools = new Array(1_000_000).fill({ name: "__proto__", inputSchema: OBJECT });
    const started = performance.now();
    expect(thrown(() => importTools(tools)).issues).toEqual([{ path: "mcp_toolspec.tools", message: "1000000 tools; at most 256 (a spec's capability limit)" }]);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("keeps messages short when a name or a type is a megabyte long", () => {
    const err = thrown(() => importTools([{ name: "x ".repeat(500_000), inputSchema: OBJECT }, { name: "b", inputSchema: { type: "y".repeat(1_000_000) } }]));
    expect(err.issues).toHaveLength(2);
    for (const issue of err.issues!) expect(issue.message.length).toBeLessThan(400);
    expect(err.message.length).toBeLessThan(600);
  });

  it("bounds the warnings of 256 tools with unknown annotations each", () => {
    const tools = Array.from({ length: 256 }, (_, i) => ({ name: `t${i}`, inputSchema: OBJECT, annotations: { a: 1, b: 2, c: 3 } }));
    const { warnings } = importTools(tools);
    expect(warnings).toHaveLength(21);
    expect(warnings[20]).toBe("and 748 more warnings");
  });

  it("leaves an inputSchema over the schema limits to validateSpec, which names the capability", () => {
    const properties = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: "string" }]));
    const { spec } = importTools([{ name: "ok", inputSchema: OBJECT }, { name: "big", inputSchema: { type: "object", properties } }]);
    const err = thrown(() => validateSpec(spec, checker));
    expect(err.code).toBe(ErrorCode.InvalidSpec);
    expect(err.issues![0]).toMatchObject({ path: "capabilities.1.input_schema", message: expect.stringMatching(/the limit is 256/) });
  });
});

describe("prototype keys", () => {
  it.each([
    ['{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"__proto__":{"type":"string"}}}}]}', "mcp_toolspec.tools.0.inputSchema.properties.__proto__"],
    ['{"tools":[{"name":"a","inputSchema":{"type":"object"},"_meta":{"__proto__":{"polluted":true}}}]}', "mcp_toolspec.tools.0._meta.__proto__"],
    ['{"tools":[{"name":"a","inputSchema":{"type":"object"},"__proto__":{"polluted":true}}]}', "mcp_toolspec.tools.0.__proto__"],
    ['{"tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"constructor":{"prototype":{"polluted":true}}}}]}', "mcp_toolspec.tools.0.annotations.constructor"],
    ['{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"__proto__":{"polluted":true}}', "mcp_toolspec.__proto__"],
  ])("refuses %s at %s and pollutes nothing", (json, path) => {
    const err = thrown(() => fromWire(json));
    expect(err.code).toBe(ErrorCode.InvalidCard);
    expect(err.issues).toEqual([{ path, message: expect.stringMatching(/is not allowed/) }]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("accepts tools named __proto__ and constructor: a name is a value, never a key of a plain object here", () => {
    const { spec } = importTools([{ name: "__proto__", inputSchema: OBJECT }, { name: "constructor", inputSchema: OBJECT }]);
    expect(validateSpec(spec, checker).spec.capabilities.map((c) => c.name)).toEqual(["__proto__", "constructor"]);
    expect(exportToolspec(validateSpec(spec, checker).spec).tools.map((t) => t.name)).toEqual(["__proto__", "constructor"]);
  });
});

describe("remote $ref", () => {
  it.each([
    "https://evil.example/schema.json",
    "http://169.254.169.254/latest/meta-data/",
    "file:///etc/passwd",
    "other.json#/$defs/x",
  ])("imports %s as sent, and validateSpec refuses it: nothing is fetched", (ref) => {
    const { spec } = importTools([{ name: "ok", inputSchema: OBJECT }, { name: "r", inputSchema: { type: "object", properties: { x: { $ref: ref } } } }]);
    const err = thrown(() => validateSpec(spec, checker));
    expect(err.code).toBe(ErrorCode.InvalidSpec);
    expect(err.issues![0]).toMatchObject({ path: "capabilities.1.input_schema", message: expect.stringMatching(/can't resolve reference/) });
  });

  it("refuses a remote $ref in an outputSchema and in a schema import declared 2020-12", () => {
    const ref = { $ref: "https://evil.example/out.json" };
    const { spec } = importTools([
      { name: "o", inputSchema: OBJECT, outputSchema: { type: "object", properties: { r: ref } } },
      { name: "p", inputSchema: { type: "object", properties: { t: { type: "array", prefixItems: [ref] } } } },
    ]);
    const err = thrown(() => validateSpec(spec, checker));
    expect(err.issues!.map((i) => i.path)).toEqual(["capabilities.0.output_schema", "capabilities.1.input_schema"]);
  });
});
