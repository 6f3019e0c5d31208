/**
 * Properties of the two directions together (fast-check): import → export gives back each
 * tool, its annotations exactly as given; export → import → export gives back the first
 * export, a fixed point. Specs go through validateSpec between the steps, as a register does
 * before a spec is stored.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exportToolspec, importToolspec, type McpTool, type McpToolspec } from "../../../../../src/domain/interop/mcp/index.js";
import { declareDialect, DRAFT_07, DRAFT_2020_12 } from "../../../../../src/domain/interop/mcp/dialect.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";
import type { AgentSpec, Capability } from "../../../../../src/domain/spec/spec.js";
import { makeSpec } from "../../../fixtures.js";

const checker = new SchemaChecker();
const RUNS = 150;

const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/);
const capabilityName = fc.array(token, { minLength: 1, maxLength: 3 }).map((t) => t.join("."));
const text = fc.string({ maxLength: 40 });
// Keys of kept data: anything but the two the registry refuses at every depth.
const key = fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k !== "__proto__" && k !== "constructor");
const jsonData = fc.dictionary(key, fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 })), { maxKeys: 4 });

const leafSchema = fc.constantFrom<Record<string, unknown>>(
  { type: "string" },
  { type: "integer", minimum: 0 },
  { type: "boolean" },
  { type: "array", items: { type: "string" } },
  { anyOf: [{ type: "string" }, { type: "null" }] },
  { enum: ["a", "b"] },
  { $ref: "#/$defs/id" },
);
const objectSchema = fc
  .record(
    {
      $schema: fc.constantFrom(undefined, DRAFT_07, DRAFT_2020_12),
      properties: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), leafSchema, { maxKeys: 4 }),
      additionalProperties: fc.boolean(),
      tuple: fc.constantFrom("none", "draft-07", "2020-12"),
      required: fc.boolean(),
    },
    { requiredKeys: ["properties", "tuple", "required"] },
  )
  .map(({ $schema, properties, additionalProperties, tuple, required }) => {
    const schema: Record<string, unknown> = { type: "object", properties: { ...properties }, $defs: { id: { type: "string" } } };
    if ($schema !== undefined) schema["$schema"] = $schema;
    if (additionalProperties !== undefined) schema["additionalProperties"] = additionalProperties;
    if (required && Object.keys(properties).length > 0) schema["required"] = [Object.keys(properties)[0]];
    // Each dialect's own tuple form, only where that dialect is declared or (for MCP) the default.
    if (tuple === "draft-07" && $schema === DRAFT_07) (schema["properties"] as Record<string, unknown>)["pair"] = { type: "array", items: [{ type: "string" }, { type: "integer" }] };
    if (tuple === "2020-12" && $schema !== DRAFT_07) (schema["properties"] as Record<string, unknown>)["pair"] = { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }] };
    return schema;
  });

const annotations = fc.record(
  { title: text, readOnlyHint: fc.boolean(), destructiveHint: fc.boolean(), idempotentHint: fc.boolean(), openWorldHint: fc.boolean() },
  { requiredKeys: [] },
);

/** MCP tools as servers send them, through JSON like the wire. */
const mcpTool = fc
  .record(
    {
      name: capabilityName,
      title: text,
      description: text,
      inputSchema: objectSchema,
      outputSchema: objectSchema,
      annotations,
      _meta: jsonData,
      icons: fc.array(fc.record({ src: fc.webUrl(), mimeType: fc.constantFrom("image/png", "image/svg+xml") }), { maxLength: 2 }),
      execution: fc.record({ taskSupport: fc.constantFrom("forbidden", "optional", "required") }),
    },
    { requiredKeys: ["name", "inputSchema"] },
  )
  .map((t) => JSON.parse(JSON.stringify(t)) as McpTool);
const toolspec: fc.Arbitrary<McpToolspec> = fc.uniqueArray(mcpTool, { minLength: 1, maxLength: 6, selector: (t) => t.name }).map((tools) => ({ tools }));

/** Capability schemas of every kind an agent may register. */
const anySchema = fc.oneof(
  objectSchema.filter((s) => s["$schema"] !== undefined || !JSON.stringify(s).includes("prefixItems")),
  fc.constantFrom<Capability["input_schema"]>(
    {},
    true,
    false,
    { type: "string", minLength: 1 },
    { type: "array", items: { $ref: "#/$defs/x" }, $defs: { x: { type: "integer" } } },
    { $schema: DRAFT_2020_12, type: "array", prefixItems: [{ type: "string" }] },
    { type: "array", items: [{ type: "string" }], additionalItems: false },
    { properties: { a: { type: "string" } }, required: ["a"] },
    { anyOf: [{ type: "object" }, { type: "string" }] },
    { type: ["object", "null"] },
    { $id: "https://e.example/tree", type: "array", items: { $ref: "#" } },
  ),
);
const capability: fc.Arbitrary<Capability> = fc
  .record(
    {
      name: capabilityName,
      description: text,
      input_schema: anySchema,
      output_schema: anySchema,
      title: text,
      annotations,
      mcp_extra: fc.dictionary(fc.constantFrom("_meta", "icons", "execution", "futureKey", "name", "inputSchema"), jsonData, { maxKeys: 3 }),
    },
    { requiredKeys: ["name", "description", "input_schema", "output_schema"] },
  )
  .map((c) => ({ ...c, tags: [], examples: [] }));
const agentSpec: fc.Arbitrary<AgentSpec> = fc
  .uniqueArray(capability, { minLength: 1, maxLength: 6, selector: (c) => c.name })
  .map((capabilities) => makeSpec({ capabilities }));

const register = (spec: McpToolspec): AgentSpec =>
  validateSpec(importToolspec({ mcp_toolspec: spec, description: "d", version: "1.0.0" }, { agentType: "srv" }).spec, checker).spec;

describe("import and export together", () => {
  it("import → export gives back each tool, annotations exactly as given", () => {
    fc.assert(
      fc.property(toolspec, (sent) => {
        const back = exportToolspec(register(sent)).tools;
        expect(back).toHaveLength(sent.tools.length);
        sent.tools.forEach((tool, i) => {
          const expected: McpTool = {
            ...tool,
            description: tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name,
            inputSchema: declareDialect(tool.inputSchema, "2020-12"),
          };
          if (tool.outputSchema !== undefined) expected.outputSchema = declareDialect(tool.outputSchema, "2020-12");
          expect(back[i]).toEqual(expected);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("export → import → export gives back the first export, a fixed point", () => {
    fc.assert(
      fc.property(agentSpec, (spec) => {
        const first = exportToolspec(validateSpec(spec, checker).spec);
        const second = exportToolspec(register(first));
        expect(second).toEqual(first);
      }),
      { numRuns: RUNS },
    );
  });
});
