/**
 * MCP requires a tool's `inputSchema` to be an object schema (`type: "object"`: tool arguments
 * are a JSON object), and until 2026-07-28 `outputSchema` too (a result's `structuredContent`
 * was an object). A capability schema may be anything, so export turns it into one
 * (PROTOCOL.md section 10.3):
 *
 *   - `{}` or `true` (anything)                → `{"type":"object"}`
 *   - `type: "object"`                         → unchanged
 *   - no `type`, but `properties`              → the same with `type: "object"` added (MCP
 *                                                arguments are always objects, so this only
 *                                                states what holds anyway)
 *   - anything else (`type: "string"`, an array schema, `false`, a bare `anyOf`, ...)
 *                                              → `{"type":"object","properties":{"payload":<schema>},"required":["payload"]}`
 *
 * Wrapping is applied to outputSchema as well, rather than leaving it out: a client that reads
 * structured results still learns their shape, and whoever answers an MCP call for such a
 * capability (the MCP front) sends `arguments.payload` to the agent and returns its reply as
 * `{"payload": reply}`. `wrapped` tells that front which capabilities need it.
 *
 * A wrapped schema moves one level down, so its `$schema` moves up to the new root (where the
 * registry and MCP clients read the dialect) and its local `$ref`s (`#`, `#/$defs/x`) are
 * rewritten to `#/properties/payload...` so they still point where they did; refs inside a
 * subschema with its own `$id` are relative to that `$id` and stay.
 */
import type { JsonSchema } from "../../../protocol/spec.js";
import { isPlainObject } from "../../spec/spec.js";
import { ONE_SCHEMA, SCHEMA_ARRAY, SCHEMA_MAP } from "../../spec/schema-keywords.js";

/** The one property a non-object schema is wrapped in. */
export const PAYLOAD_PROPERTY = "payload";
const PAYLOAD_POINTER = `#/properties/${PAYLOAD_PROPERTY}`;

export type McpObjectSchema = { schema: Record<string, unknown>; wrapped: boolean };

export function toMcpObjectSchema(schema: JsonSchema): McpObjectSchema {
  if (schema === true || (isPlainObject(schema) && Object.keys(schema).length === 0)) return { schema: { type: "object" }, wrapped: false };
  if (isPlainObject(schema)) {
    if (schema["type"] === "object") return { schema, wrapped: false };
    if (schema["type"] === undefined && isPlainObject(schema["properties"])) return { schema: { type: "object", ...schema }, wrapped: false };
  }
  return { schema: wrap(schema), wrapped: true };
}

/** True when `schema` needs no wrapping: export keeps it (maybe adding `type`) as the tool's schema. */
export const isMcpObjectSchema = (schema: JsonSchema): boolean => !toMcpObjectSchema(schema).wrapped;

function wrap(schema: JsonSchema): Record<string, unknown> {
  let inner: JsonSchema = schema;
  let declared: unknown;
  if (isPlainObject(schema)) {
    const { $schema, ...rest } = schema;
    declared = $schema;
    inner = schema["$id"] === undefined ? rebaseLocalRefs(rest) : rest;
  }
  return {
    ...(declared === undefined ? {} : { $schema: declared }),
    type: "object",
    properties: { [PAYLOAD_PROPERTY]: inner },
    required: [PAYLOAD_PROPERTY],
  };
}

/**
 * A copy of `root` whose JSON-pointer `$ref`s (`#` and `#/...`) point under PAYLOAD_POINTER.
 * Iterative, and only schema nodes are copied (data keywords are shared, never read): the
 * input stays untouched and a deep schema costs no stack.
 */
function rebaseLocalRefs(root: Record<string, unknown>): Record<string, unknown> {
  const out = { ...root };
  const stack: Array<Record<string, unknown>> = [out];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const ref = node["$ref"];
    if (typeof ref === "string" && (ref === "#" || ref.startsWith("#/"))) setOwn(node, "$ref", PAYLOAD_POINTER + ref.slice(1));
    // A copy of a subschema, queued for the same treatment; one with its own $id keeps its refs.
    const copy = (sub: unknown): unknown => {
      if (!isPlainObject(sub) || sub["$id"] !== undefined) return sub;
      const c = { ...sub };
      stack.push(c);
      return c;
    };
    for (const [key, value] of Object.entries(node)) {
      if (SCHEMA_ARRAY.has(key) && Array.isArray(value)) setOwn(node, key, value.map(copy));
      else if (ONE_SCHEMA.has(key)) setOwn(node, key, copy(value));
      else if (SCHEMA_MAP.has(key) && isPlainObject(value)) setOwn(node, key, Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)])));
    }
  }
  return out;
}

/** Sets an own property even for a key such as `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
