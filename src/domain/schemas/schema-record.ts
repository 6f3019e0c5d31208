/**
 * The record of one version of a named schema, `schemas.<name>.<version>` in the bucket
 * (PROTOCOL.md section 11.1). Written once by `registry.schema.put.<name>` and never changed;
 * read, like every record, as untrusted input (records.ts): one that does not fit is skipped.
 */
import type { JsonSchema } from "../../protocol/spec.js";
import { isObject, number, objectOf, oneOf, string, type Check, type ShapeOf } from "../model/shape.js";

export type SchemaRecord = {
  readonly kind: "schema";
  readonly name: string;
  readonly version: string;
  readonly schema: JsonSchema;
  readonly description: string;
  readonly created_at: number;
};

const jsonSchema: Check = (v) => (isObject(v) || typeof v === "boolean" ? undefined : "not a JSON Schema (an object or a boolean)");

const shape: ShapeOf<SchemaRecord> = {
  kind: oneOf(["schema"]),
  name: string,
  version: string,
  schema: jsonSchema,
  description: string,
  created_at: number,
};
const checkSchemaRecord = objectOf(shape);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeSchemaRecord = (r: SchemaRecord): Uint8Array => encoder.encode(JSON.stringify(r));

/** The record, or what is wrong with it (its name and version must be its key's). */
export function readSchemaRecord(bytes: Uint8Array, name: string, version: string): SchemaRecord | string {
  let v: unknown;
  try {
    v = JSON.parse(decoder.decode(bytes));
  } catch {
    return "not JSON";
  }
  if (!isObject(v)) return "not a JSON object";
  const problem = checkSchemaRecord(v);
  if (problem !== undefined) return problem;
  const r = v as unknown as SchemaRecord;
  if (r.name !== name || r.version !== version) return "name, version: not those of its key";
  return r;
}

/**
 * Two puts carry the same content when their schemas are equal as JSON values (key order
 * aside) and their descriptions are equal: then the second is idempotent, else a conflict.
 */
export function sameContent(a: { schema: unknown; description: string }, b: { schema: unknown; description: string }): boolean {
  return a.description === b.description && canonicalJson(a.schema) === canonicalJson(b.schema);
}

/** JSON with object keys sorted; schemas are bounded in depth (64) before they get here. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}
