/**
 * The JSON Schema dialects of MCP tool schemas in the registry's compiler: both drafts MCP
 * servers declare compile, an undeclared schema is read as draft-07 (so import declares
 * 2020-12 where MCP's reading differs), and MCP's own `x-mcp-header` annotation is known.
 */
import { describe, expect, it } from "vitest";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { DRAFT_07, DRAFT_2020_12, declareDialect, undeclaredDialect } from "../../../../../src/domain/interop/mcp/dialect.js";

const checker = new SchemaChecker();
const args = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

describe("the schema compiler and MCP's dialects", () => {
  it.each([
    ["draft-07", DRAFT_07],
    ["draft-07 without the empty fragment", "http://json-schema.org/draft-07/schema"],
    ["2020-12", DRAFT_2020_12],
    ["2020-12 with an empty fragment", `${DRAFT_2020_12}#`],
  ])("compiles a tool schema that declares %s", (_name, $schema) => {
    expect(checker.check({ $schema, ...args })).toBeNull();
  });

  it("compiles each dialect's own keywords only under its declaration", () => {
    const tuple2020 = { type: "object", properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }] } } };
    const tuple07 = { type: "object", properties: { pair: { type: "array", items: [{ type: "string" }, { type: "integer" }] } } };
    expect(checker.check({ $schema: DRAFT_2020_12, ...tuple2020 })).toBeNull();
    expect(checker.check({ $schema: DRAFT_07, ...tuple07 })).toBeNull();
    expect(checker.check({ $schema: DRAFT_2020_12, ...tuple07 })).toMatch(/items must be object,boolean/);
    // Undeclared means draft-07 to the registry: the reason import declares MCP's 2020-12.
    expect(checker.check(tuple2020)).toMatch(/unknown keyword: "prefixItems"/);
    expect(checker.check(declareDialect(tuple2020, "2020-12"))).toBeNull();
  });

  it("knows MCP's x-mcp-header annotation (2026-07-28) and still refuses other unknown keywords", () => {
    const withHeader = (key: string) => ({ type: "object", properties: { region: { type: "string", [key]: "Region" } } });
    expect(checker.check(withHeader("x-mcp-header"))).toBeNull();
    expect(checker.check({ $schema: DRAFT_2020_12, ...withHeader("x-mcp-header") })).toBeNull();
    expect(checker.check(withHeader("x-mcp-headr"))).toMatch(/unknown keyword: "x-mcp-headr"/);
  });
});

describe("undeclaredDialect", () => {
  it("calls a schema neutral when it means the same in both dialects", () => {
    expect(undeclaredDialect({})).toBe("neutral");
    expect(undeclaredDialect({ ...args, $defs: { a: { type: "string" } }, definitions: { b: { $ref: "#/$defs/a" } } })).toBe("neutral");
    expect(undeclaredDialect({ type: "array", items: { type: "string" } })).toBe("neutral");
  });

  it("finds 2020-12-only keywords at any depth of subschemas", () => {
    expect(undeclaredDialect({ type: "object", unevaluatedProperties: false })).toBe("2020-12");
    expect(undeclaredDialect({ type: "object", properties: { a: { anyOf: [{ type: "array", prefixItems: [] }] } } })).toBe("2020-12");
    expect(undeclaredDialect({ $defs: { d: { dependentRequired: { a: ["b"] } } } })).toBe("2020-12");
  });

  it("finds draft-07-only forms", () => {
    expect(undeclaredDialect({ type: "array", items: [{ type: "string" }] })).toBe("draft-07");
    expect(undeclaredDialect({ type: "object", dependencies: { a: ["b"] } })).toBe("draft-07");
    expect(undeclaredDialect({ type: "array", items: { type: "string" }, additionalItems: false })).toBe("draft-07");
    expect(undeclaredDialect({ type: "array", items: [{}], prefixItems: [{}] })).toBe("mixed");
  });

  it("never reads data keywords as schema", () => {
    expect(undeclaredDialect({ type: "object", default: { prefixItems: [] }, examples: [{ dependencies: {} }], const: { unevaluatedItems: false } })).toBe("neutral");
    expect(undeclaredDialect({ enum: [{ items: [1] }] })).toBe("neutral");
  });
});

describe("declareDialect", () => {
  it("declares the dialect the keywords show, first, and changes nothing else", () => {
    const schema = { type: "object", properties: { t: { type: "array", prefixItems: [{ type: "string" }] } } };
    const declared = declareDialect(schema, "2020-12");
    expect(Object.keys(declared)[0]).toBe("$schema");
    expect(declared).toEqual({ $schema: DRAFT_2020_12, ...schema });
    expect(schema).not.toHaveProperty("$schema");
  });

  it("leaves declared, neutral and other-dialect schemas alone (the same object)", () => {
    const declared = { $schema: DRAFT_07, type: "object", unevaluatedProperties: false };
    const neutral = { ...args };
    const draft07 = { type: "array", items: [{ type: "string" }] };
    expect(declareDialect(declared, "2020-12")).toBe(declared);
    expect(declareDialect(neutral, "2020-12")).toBe(neutral);
    expect(declareDialect(draft07, "2020-12")).toBe(draft07);
    expect(declareDialect(draft07, "draft-07")).toEqual({ $schema: DRAFT_07, ...draft07 });
  });
});
