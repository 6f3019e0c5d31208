/**
 * MCP tool specs in and out of the registry (PROTOCOL.md sections 10.2 and 10.3), as pure
 * functions: no NATS, no I/O. The service's register and `toolspec` endpoints, the SDK and the
 * CLI call these.
 *
 *   importToolspec(body, { agentType })  register body with `mcp_toolspec` → { spec, warnings }
 *                                        (throws invalid_card; run validateSpec on `spec` next)
 *   exportToolspec(spec)                 any spec → { tools: [...] } (MCP tools/list)
 *   toMcpObjectSchema(schema)            a capability schema as MCP's object schema, and
 *                                        whether it was wrapped in `payload` (for the MCP front)
 */
export { importToolspec, DEFAULT_KIND, DEFAULT_OWNER_TEAM, defaultNatsSubject } from "./import.js";
export type { ImportOptions, ImportedToolspec, ToolspecRegisterBody } from "./import.js";
export { exportToolspec, capabilityToTool } from "./export.js";
export { toMcpObjectSchema, isMcpObjectSchema, PAYLOAD_PROPERTY } from "./object-schema.js";
export type { McpObjectSchema } from "./object-schema.js";
export { DRAFT_07, DRAFT_2020_12 } from "./dialect.js";
export { MCP_ANNOTATION_DEFAULTS, MCP_TOOL_NAME_MAX, MAX_TOOLS } from "./tool.js";
export type { McpTool, McpToolspec } from "./tool.js";
export { MAX_TOOLSPEC_DEPTH } from "./guard.js";
