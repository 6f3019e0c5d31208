/**
 * The MCP Tool as `tools/list` returns it, and the facts of the MCP specification this module
 * relies on. Checked against modelcontextprotocol/modelcontextprotocol:
 *
 *  - schema/2025-06-18/schema.ts: `Tool` has `name` and `title?` (BaseMetadata), `description?`,
 *    `inputSchema` (`type: "object"` required, `properties?`, `required?`), `outputSchema?`
 *    (same shape; it describes a result's `structuredContent`, itself an object),
 *    `annotations?` and `_meta?`.
 *  - schema/2025-11-25/schema.ts adds `icons?` (from Icons) and `execution?` (ToolExecution,
 *    `taskSupport` "forbidden" by default); `$schema?` is named on both schemas, and
 *    outputSchema "defaults to JSON Schema 2020-12 when no explicit $schema is provided" and is
 *    "currently restricted to type: object at the root level".
 *  - schema/2026-07-28/schema.ts (the newest dated schema) keeps `inputSchema` with a required
 *    `type: "object"` but lets `outputSchema` be any 2020-12 schema, and `structuredContent` any
 *    value. Property schemas may carry the `x-mcp-header` annotation (server/tools.mdx).
 *  - ToolAnnotations in all three: `title?`, `readOnlyHint?` (default false), `destructiveHint?`
 *    (default true), `idempotentHint?` (default false), `openWorldHint?` (default true);
 *    `destructiveHint` and `idempotentHint` are "meaningful only when readOnlyHint == false".
 *    Display name precedence: `title`, then `annotations.title`, then `name`.
 *  - docs/specification/2025-11-25/basic/index.mdx, "JSON Schema Usage": a schema without
 *    `$schema` is JSON Schema 2020-12; implementations must support 2020-12 and should document
 *    the other dialects they support (the registry: draft-07 and 2020-12).
 *  - docs/specification/2025-11-25/server/tools.mdx, "Tool Names" (from SEP-986, whose first
 *    draft said 1 to 64 characters and allowed `/`; the specification text is what shipped, and
 *    2026-07-28 repeats it): names SHOULD be 1 to 128 characters, are case-sensitive, SHOULD use
 *    only A-Z, a-z, 0-9, `_`, `-` and `.`, and SHOULD be unique within a server.
 */
import type { ToolAnnotations } from "../../../protocol/spec.js";

/** An MCP tool. Keys the registry does not map (`_meta`, `icons`, `execution`, later ones) are kept as they came. */
export type McpTool = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
  [key: string]: unknown;
};

/** The result of MCP `tools/list` (without paging): what `toolspec` exports and `mcp_toolspec` imports. */
export type McpToolspec = { tools: McpTool[] };

/** The tool keys the registry maps to capability fields of other names; never taken from `mcp_extra` on export. */
export const MAPPED_TOOL_KEYS: ReadonlySet<string> = new Set(["name", "title", "description", "inputSchema", "outputSchema", "annotations"]);

/**
 * The tool keys a capability keeps under MCP's own names (PROTOCOL.md section 10.2: `get` shows
 * them, `toolspec` gives them back), each with the JSON type MCP gives it. A key of another type
 * is not what MCP means by it: it goes, as it came, with every unknown key to `mcp_extra`.
 */
export const KEPT_TOOL_KEYS = ["_meta", "icons", "execution"] as const;
export type KeptToolKey = (typeof KEPT_TOOL_KEYS)[number];

/** MCP's defaults for the four hints: what a client assumes of a hint a tool leaves out. */
export const MCP_ANNOTATION_DEFAULTS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const;

export const ANNOTATION_HINTS = Object.keys(MCP_ANNOTATION_DEFAULTS) as Array<keyof typeof MCP_ANNOTATION_DEFAULTS>;

/** Hints MCP defines only for a tool that is not read-only. */
const WRITE_HINTS: ReadonlySet<string> = new Set(["destructiveHint", "idempotentHint"]);

/**
 * The annotations an MCP client acts on (PROTOCOL.md section 10.2, `effective_annotations`):
 * the given ones, and MCP's default for each hint left out, except `destructiveHint` and
 * `idempotentHint` on a tool whose `readOnlyHint` is true, where MCP gives them no meaning.
 * Shown beside the stored annotations by the registry's own replies, never put into an
 * exported tool, where a client would take a default for the server's word.
 */
export function effectiveAnnotations(given: ToolAnnotations | undefined): ToolAnnotations {
  const readOnly = given?.readOnlyHint === true;
  const out: ToolAnnotations = given?.title === undefined ? {} : { title: given.title };
  for (const hint of ANNOTATION_HINTS) {
    const value = given?.[hint];
    if (value !== undefined) out[hint] = value;
    else if (!(readOnly && WRITE_HINTS.has(hint))) out[hint] = MCP_ANNOTATION_DEFAULTS[hint];
  }
  return out;
}

/** The longest tool name MCP recommends; the registry takes up to CAPABILITY_MAX_LENGTH and warns past this. */
export const MCP_TOOL_NAME_MAX = 128;

/** At least one tool and at most as many as a spec has capabilities (PROTOCOL.md section 3). */
export const MAX_TOOLS = 256;
