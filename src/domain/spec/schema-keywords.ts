/**
 * Where JSON Schema keywords hold subschemas (draft-07 and 2020-12): a walk that knows them
 * tells a schema from data (`const`, `enum`, `default` and `examples` hold data, never schemas).
 * ajv's strict mode refuses unknown keywords, so these lists cover every schema it accepts.
 */

/** The value is one subschema. */
export const ONE_SCHEMA = new Set(["additionalItems", "items", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"]);
/** The value is an array of subschemas. */
export const SCHEMA_ARRAY = new Set(["items", "prefixItems", "allOf", "anyOf", "oneOf"]);
/** The value maps names (or patterns) to subschemas. */
export const SCHEMA_MAP = new Set(["$defs", "definitions", "properties", "patternProperties", "dependencies", "dependentSchemas"]);

/** The subschemas held by `key: value` of a schema object, each with its key path. */
export function subschemas(key: string, value: unknown): Array<[string, unknown]> {
  if (ONE_SCHEMA.has(key) && isSchema(value)) return [[key, value]];
  if (SCHEMA_ARRAY.has(key) && Array.isArray(value)) return value.map((v, i) => [`${key}.${i}`, v] as [string, unknown]);
  if (SCHEMA_MAP.has(key) && isObject(value)) return Object.entries(value).map(([k, v]) => [`${key}.${k}`, v] as [string, unknown]);
  return [];
}

const isObject = (v: unknown): v is object => typeof v === "object" && v !== null && !Array.isArray(v);
const isSchema = (v: unknown): boolean => typeof v === "boolean" || isObject(v);
