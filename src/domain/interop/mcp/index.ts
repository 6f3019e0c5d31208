/**
 * MCP tool specs in and out of the registry (PROTOCOL.md sections 10.2 and 10.3), as pure
 * functions: no NATS, no I/O. The service's register and `toolspec` endpoints, the SDK, the CLI
 * and the MCP front call these; each file's header states its rules.
 *
 *   importToolspec(body: ToolspecRegisterBody, options: { agentType }): { spec: AgentSpecInput, warnings: string[] }
 *       a register body with `mcp_toolspec` as a spec (import.ts). Throws invalid_card for a
 *       tool spec it cannot use; the caller then validates `spec` like any other (validateSpec
 *       or the service's worker checks), whose issues say `capabilities.<i>` for tool i.
 *   exportToolspec(spec: { capabilities }): { tools: McpTool[] }
 *       any spec as the result of MCP tools/list (export.ts); capabilityToTool does one.
 *   effectiveAnnotations(annotations): ToolAnnotations
 *       the given annotations plus MCP's defaults that apply (tool.ts): what `get` and
 *       `lookup` show as `effective_annotations`, never what `toolspec` exports.
 *   toMcpObjectSchema(schema): { schema, wrapped }
 *       a capability schema as MCP's object schema (object-schema.ts); `wrapped` tells the MCP
 *       front to unwrap `arguments.payload` and to answer `{"payload": reply}`.
 */
export { importToolspec, DEFAULT_KIND, DEFAULT_OWNER_TEAM, defaultNatsSubject } from "./import.js";
export type { ImportOptions, ImportedToolspec, ToolspecRegisterBody } from "./import.js";
export { exportToolspec, capabilityToTool } from "./export.js";
export { toMcpObjectSchema, isMcpObjectSchema, PAYLOAD_PROPERTY } from "./object-schema.js";
export type { McpObjectSchema } from "./object-schema.js";
export { DRAFT_07, DRAFT_2020_12 } from "./dialect.js";
export { MCP_ANNOTATION_DEFAULTS, MCP_TOOL_NAME_MAX, MAX_TOOLS, effectiveAnnotations } from "./tool.js";
export type { McpTool, McpToolspec } from "./tool.js";
export { MAX_TOOLSPEC_DEPTH } from "./guard.js";
