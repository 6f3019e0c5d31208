/**
 * Which JSON Schema dialect a schema that declares none is written in. The registry reads such
 * a schema as draft-07 (schema-compiler.ts) and MCP reads it as 2020-12 (tool.ts), so moving a
 * schema across would change what it means whenever it uses a keyword the two dialects treat
 * differently. Both directions therefore declare the sender's dialect, and only then: most tool
 * schemas (`type`, `properties`, `required`, `$defs`, `$ref`, ...) mean the same in both and
 * cross unchanged.
 */
import { isPlainObject } from "../../spec/spec.js";
import { subschemas } from "../../spec/schema-keywords.js";

export const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** Keywords only 2020-12 (or 2019-09, which it replaced) defines: unknown to a draft-07 reader. */
const ONLY_2020 = new Set([
  "prefixItems",
  "unevaluatedItems",
  "unevaluatedProperties",
  "dependentRequired",
  "dependentSchemas",
  "minContains",
  "maxContains",
  "$dynamicRef",
  "$dynamicAnchor",
  "$recursiveRef",
  "$recursiveAnchor",
  "$vocabulary",
]);
/** Forms only draft-07 defines: 2020-12 dropped them (`items` as an array is invalid there). */
const ONLY_07 = new Set(["additionalItems", "dependencies"]);

/** What the keywords of an undeclared schema show: `neutral` when it means the same in both. */
export type UndeclaredDialect = "neutral" | "draft-07" | "2020-12" | "mixed";

/**
 * The dialect an undeclared schema's keywords belong to, found by an iterative walk over its
 * subschemas only (data under `const`, `enum`, `default` and `examples` is never read as schema).
 */
export function undeclaredDialect(schema: unknown): UndeclaredDialect {
  let uses07 = false;
  let uses2020 = false;
  const stack: unknown[] = [schema];
  while (stack.length > 0 && !(uses07 && uses2020)) {
    const node = stack.pop();
    if (!isPlainObject(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      if (ONLY_2020.has(key)) uses2020 = true;
      if (ONLY_07.has(key) || (key === "items" && Array.isArray(value))) uses07 = true;
      for (const [, sub] of subschemas(key, value)) stack.push(sub);
    }
  }
  if (uses07 && uses2020) return "mixed";
  return uses2020 ? "2020-12" : uses07 ? "draft-07" : "neutral";
}

/**
 * The schema with `$schema` set to `dialect` when it declares none and its keywords show that
 * dialect; otherwise the schema itself. The declaration comes first, where readers look for it.
 */
export function declareDialect(schema: Record<string, unknown>, dialect: "draft-07" | "2020-12"): Record<string, unknown> {
  if (schema["$schema"] !== undefined || undeclaredDialect(schema) !== dialect) return schema;
  return { $schema: dialect === "draft-07" ? DRAFT_07 : DRAFT_2020_12, ...schema };
}
