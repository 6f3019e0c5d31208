/**
 * The `toolspec` export (PROTOCOL.md section 10.3): any spec, an agent's too, as the result of
 * MCP `tools/list`, so every registered capability can be offered to MCP clients.
 *
 * Capability → tool:
 *   name         = name
 *   title        = title, when the capability has one (display_name names the agent, not a
 *                  tool, so it is never used)
 *   description  = description
 *   inputSchema  = input_schema as an object schema (object-schema.ts: `{}` becomes
 *                  `{"type":"object"}`, other types are wrapped in the property `payload`)
 *   outputSchema = output_schema by the same rule, left out when it accepts anything (`{}`,
 *                  `true`): MCP has no use for a schema that says nothing
 *   annotations  = annotations, when present
 *   _meta, icons, execution
 *                = the capability's, when present
 *   ...mcp_extra = the other kept tool keys back at the top level; one that collides with a
 *                  mapped key (only a spec registered directly can have that) is left out, and
 *                  the three above come from the capability's own fields when it has them (a
 *                  spec stored before v1.2 kept them in mcp_extra), so its fields always win
 * A schema that declares no `$schema` but uses draft-07-only forms (`items` as an array,
 * `additionalItems`, `dependencies`) gets `$schema: draft-07` declared, because MCP clients
 * read undeclared schemas as 2020-12 (dialect.ts).
 *
 * Unchanged subtrees of the spec are shared with the result: treat both as immutable.
 */
import type { AgentSpec, Capability, JsonSchema } from "../../../protocol/spec.js";
import { isPlainObject } from "../../spec/spec.js";
import { declareDialect } from "./dialect.js";
import { toMcpObjectSchema } from "./object-schema.js";
import { KEPT_TOOL_KEYS, MAPPED_TOOL_KEYS, type McpTool, type McpToolspec } from "./tool.js";

export function exportToolspec(spec: Pick<AgentSpec, "capabilities">): McpToolspec {
  return { tools: spec.capabilities.map(capabilityToTool) };
}

export function capabilityToTool(cap: Capability): McpTool {
  const tool: McpTool = {
    name: cap.name,
    ...(cap.title === undefined ? {} : { title: cap.title }),
    description: cap.description,
    inputSchema: mcpSchema(cap.input_schema),
    ...(acceptsAnything(cap.output_schema) ? {} : { outputSchema: mcpSchema(cap.output_schema) }),
    ...(cap.annotations === undefined ? {} : { annotations: withoutUndefined(cap.annotations) }),
  };
  const own = KEPT_TOOL_KEYS.filter((k) => cap[k] !== undefined).map((k) => [k, cap[k]] as const);
  const extra = Object.entries(cap.mcp_extra ?? {}).filter(([key]) => !MAPPED_TOOL_KEYS.has(key) && !own.some(([k]) => k === key));
  if (own.length === 0 && extra.length === 0) return tool;
  // fromEntries and spread define own properties, so a kept key such as `__proto__` stays data.
  return { ...tool, ...Object.fromEntries(own), ...Object.fromEntries(extra) };
}

const mcpSchema = (schema: JsonSchema): Record<string, unknown> => declareDialect(toMcpObjectSchema(schema).schema, "draft-07");

const acceptsAnything = (schema: JsonSchema): boolean => schema === true || (isPlainObject(schema) && Object.keys(schema).length === 0);

/** Annotations as JSON would carry them: a key whose value is undefined is no key at all. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
