/**
 * exportToolspec, one rule a test (PROTOCOL.md section 10.3): any spec, agents included, as
 * MCP tools, and the object-schema rule every inputSchema and outputSchema goes through.
 */
import { describe, expect, it } from "vitest";
import { capabilityToTool, exportToolspec, importToolspec, isMcpObjectSchema, toMcpObjectSchema } from "../../../../../src/domain/interop/mcp/index.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";
import type { Capability } from "../../../../../src/domain/spec/spec.js";
import { makeSpec } from "../../../fixtures.js";

const checker = new SchemaChecker();
const capability = (extra: Partial<Capability> = {}): Capability => ({ name: "c", description: "does c", input_schema: {}, output_schema: {}, tags: [], examples: [], ...extra });
// Straight from a capability, not through zod's parse (which copies objects): identity shows what is shared.
const exportOne = (extra: Partial<Capability> = {}) => capabilityToTool(capability(extra));
const wrapped = (schema: unknown) => ({ type: "object", properties: { payload: schema }, required: ["payload"] });

describe("capability → tool", () => {
  it("exports an agent's capabilities, in order, with name, description and inputSchema", () => {
    const spec = makeSpec({ display_name: "Agent A", capabilities: [capability({ name: "a.b" }), capability({ name: "Z" })] });
    expect(exportToolspec(spec)).toEqual({
      tools: [
        { name: "a.b", description: "does c", inputSchema: { type: "object" } },
        { name: "Z", description: "does c", inputSchema: { type: "object" } },
      ],
    });
  });

  it("title is the capability's own; the spec's display_name is never used", () => {
    expect(exportOne({ title: "Do C" }).title).toBe("Do C");
    expect(exportOne()).not.toHaveProperty("title");
  });

  it("annotations when present, without undefined keys", () => {
    expect(exportOne({ annotations: { readOnlyHint: true, title: undefined } }).annotations).toEqual({ readOnlyHint: true });
    expect(exportOne({ annotations: { readOnlyHint: true, title: undefined } }).annotations).not.toHaveProperty("title");
    expect(exportOne()).not.toHaveProperty("annotations");
  });

  it("outputSchema is left out when it accepts anything, kept when it is an object schema", () => {
    expect(exportOne()).not.toHaveProperty("outputSchema");
    expect(exportOne({ output_schema: true })).not.toHaveProperty("outputSchema");
    const out = { type: "object", properties: { n: { type: "number" } } };
    expect(exportOne({ output_schema: out }).outputSchema).toBe(out);
  });

  it("mcp_extra keys go back to the top level; one that collides with a mapped key is left out", () => {
    const tool = exportOne({ mcp_extra: { _meta: { a: 1 }, icons: [], name: "evil", inputSchema: { type: "string" }, annotations: {} } });
    expect(tool).toEqual({ name: "c", description: "does c", inputSchema: { type: "object" }, _meta: { a: 1 }, icons: [] });
  });

  it("_meta, icons and execution go back under their names; a spec stored before v1.2 has them in mcp_extra, and the capability's own win", () => {
    const kept = { _meta: { ui: { resourceUri: "ui://srv/form" } }, icons: [{ src: "https://e.example/i.png" }], execution: { taskSupport: "optional" } };
    expect(exportOne(kept)).toEqual({ name: "c", description: "does c", inputSchema: { type: "object" }, ...kept });
    expect(exportOne({ mcp_extra: kept })).toEqual({ name: "c", description: "does c", inputSchema: { type: "object" }, ...kept });
    expect(exportOne({ _meta: { own: true }, mcp_extra: { _meta: { old: true }, futureKey: 1 } })).toEqual({
      name: "c",
      description: "does c",
      inputSchema: { type: "object" },
      _meta: { own: true },
      futureKey: 1,
    });
  });

  it("keeps an mcp_extra key named __proto__ as data, never as the prototype", () => {
    const mcp_extra = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const tool = exportOne({ mcp_extra });
    expect(Object.getPrototypeOf(tool)).toBe(Object.prototype);
    expect((tool as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(JSON.stringify(tool)).toContain('"__proto__":{"polluted":true}');
  });

  it("declares draft-07 on a schema that needs it, since MCP reads undeclared schemas as 2020-12", () => {
    const input = { type: "object", properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } } };
    expect(exportOne({ input_schema: input }).inputSchema).toEqual({ $schema: "http://json-schema.org/draft-07/schema#", ...input });
    const neutral = { type: "object", properties: { q: { type: "string" } } };
    expect(exportOne({ input_schema: neutral }).inputSchema).toBe(neutral);
  });

  it("exports an imported tool with its kept keys", () => {
    const { spec } = importToolspec(
      {
        mcp_toolspec: { tools: [{ name: "t", inputSchema: { type: "object" }, _meta: { k: "v" }, execution: { taskSupport: "forbidden" } }] },
        description: "d",
        version: "1.0.0",
      },
      { agentType: "srv" },
    );
    expect(exportToolspec(validateSpec(spec, checker).spec).tools[0]).toEqual({
      name: "t",
      description: "t",
      inputSchema: { type: "object" },
      _meta: { k: "v" },
      execution: { taskSupport: "forbidden" },
    });
  });
});

describe("toMcpObjectSchema", () => {
  it("turns {} and true into {type: object}", () => {
    expect(toMcpObjectSchema({})).toEqual({ schema: { type: "object" }, wrapped: false });
    expect(toMcpObjectSchema(true)).toEqual({ schema: { type: "object" }, wrapped: false });
  });

  it("keeps an object schema as it is", () => {
    const s = { type: "object", additionalProperties: false };
    expect(toMcpObjectSchema(s)).toEqual({ schema: s, wrapped: false });
    expect(toMcpObjectSchema(s).schema).toBe(s);
  });

  it("adds type object to a schema with properties and no type", () => {
    expect(toMcpObjectSchema({ properties: { a: { type: "string" } }, required: ["a"] })).toEqual({
      schema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      wrapped: false,
    });
  });

  it("wraps every other schema as the one required property payload", () => {
    for (const s of [{ type: "string" }, { type: "array", items: { type: "integer" } }, { type: ["object", "null"] }, { anyOf: [{ type: "string" }, { type: "object" }] }, { enum: [1, 2] }]) {
      expect(toMcpObjectSchema(s)).toEqual({ schema: wrapped(s), wrapped: true });
    }
    expect(toMcpObjectSchema(false)).toEqual({ schema: wrapped(false), wrapped: true });
    expect(isMcpObjectSchema({ type: "string" })).toBe(false);
    expect(isMcpObjectSchema({ type: "object" })).toBe(true);
  });

  it("wraps inputSchema and outputSchema alike on export", () => {
    const tool = exportOne({ input_schema: { type: "string", minLength: 1 }, output_schema: { type: "array", items: { type: "string" } } });
    expect(tool.inputSchema).toEqual(wrapped({ type: "string", minLength: 1 }));
    expect(tool.outputSchema).toEqual(wrapped({ type: "array", items: { type: "string" } }));
  });

  it("moves $schema to the wrapper's root and rebases local $refs so they still resolve", () => {
    const tree = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "array",
      items: { $ref: "#/$defs/node" },
      $defs: { node: { type: "object", properties: { children: { $ref: "#" }, label: { type: "string" } }, default: { $ref: "#/data" } } },
    };
    const { schema } = toMcpObjectSchema(tree);
    expect(schema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        payload: {
          type: "array",
          items: { $ref: "#/properties/payload/$defs/node" },
          $defs: { node: { type: "object", properties: { children: { $ref: "#/properties/payload" }, label: { type: "string" } }, default: { $ref: "#/data" } } },
        },
      },
      required: ["payload"],
    });
    // The input is untouched, and the wrapped schema compiles: its refs resolve.
    expect(tree.items.$ref).toBe("#/$defs/node");
    expect(checker.check(tree)).toBeNull();
    expect(checker.check(schema)).toBeNull();
  });

  it("leaves refs alone inside a subschema with its own $id, and everywhere when the root has one", () => {
    const withId = { type: "array", items: { $id: "https://e.example/item", type: "object", properties: { self: { $ref: "#" } } } };
    expect((toMcpObjectSchema(withId).schema["properties"] as any).payload.items).toBe(withId.items);
    const rootId = { $id: "https://e.example/list", type: "array", items: { $ref: "#/$defs/x" }, $defs: { x: { type: "string" } } };
    const { schema } = toMcpObjectSchema(rootId);
    expect((schema["properties"] as any).payload).toEqual(rootId);
    expect(checker.check(schema)).toBeNull();
  });
});
