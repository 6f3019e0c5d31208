/**
 * The costly half of checking a capability schema: compiling it with ajv. Schemas come from
 * agents, so ajv runs with `$data` off, no remote loader (a remote `$ref` fails to resolve),
 * strict keywords, no logging of generated code, and the linear-time regex engine for every
 * pattern (linear-regexp.ts). The service runs this in worker threads (adapters/workers), off
 * the event loop that answers queries; the CLI runs it in process.
 */
import { Ajv, type Options } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { PatternError, compilePattern, linearRegExp } from "./linear-regexp.js";
import { subschemas } from "./schema-keywords.js";

/** Why a schema was refused: `path` is inside the schema ("" for the schema as a whole). */
export type SchemaProblem = { readonly path: string; readonly message: string };
/** null when the schema compiles. */
export type SchemaVerdict = SchemaProblem | null;

/** ajv's options for agents' schemas; payload checks against them (src/mcp) use the same. */
export const AJV_OPTIONS: Readonly<Options> = {
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  validateFormats: false,
  $data: false,
  allErrors: false,
  // ajv logs the whole generated function when it fails to compile: megabytes per request.
  logger: false,
  code: { regExp: linearRegExp },
  // Otherwise strict mode tests every `properties` name against every `patternProperties`
  // pattern with V8's own backtracking RegExp while compiling. A name matching a pattern is
  // valid JSON Schema; strict mode only flags it as a likely mistake.
  allowMatchingProperties: true,
  // Strict mode refuses unknown keywords (a typo must not pass silently); these are defined by
  // a specification the registry takes schemas from and only annotate, so they are known here.
  // MCP 2026-07-28 (server/tools.mdx) lets a property schema name the HTTP header its argument
  // is mirrored into.
  keywords: ["x-mcp-header"],
};
const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";

/** True when a schema declares JSON Schema 2020-12 (else it is read as draft-07). */
export function declaresDraft2020(schema: object): boolean {
  const declared = (schema as { $schema?: unknown }).$schema;
  return declared === DRAFT_2020 || declared === `${DRAFT_2020}#`;
}

/**
 * Compilations per pair of ajv instances. ajv keeps every compiled schema and pattern in its
 * instance's code scope for good (about 200 KB for a schema at the node limit, 13 KB per
 * RE2 pattern), so a long-lived instance grows with every new schema an agent sends; a new
 * pair costs about 2 ms, and after this many compilations the old pair is dropped.
 */
export const COMPILES_PER_INSTANCE = 50;

export class SchemaCompiler {
  /** draft-07 (the default, and what most tool schemas are) and 2020-12 when a schema declares it. */
  private draft7 = new Ajv(AJV_OPTIONS);
  private draft2020: Ajv2020 | undefined;
  private compiles = 0;

  /** Compiles a schema that passed the limits of schema-check.ts (never a boolean). */
  compile(schema: object): SchemaVerdict {
    if (++this.compiles > COMPILES_PER_INSTANCE) {
      this.draft7 = new Ajv(AJV_OPTIONS);
      this.draft2020 = undefined;
      this.compiles = 1;
    }
    const patterns = patternProblem(schema);
    if (patterns) return patterns;
    const ajv = declaresDraft2020(schema) ? (this.draft2020 ??= new Ajv2020(AJV_OPTIONS)) : this.draft7;
    const knownRefs = new Set(Object.keys(ajv.refs));
    try {
      ajv.compile(schema);
      return null;
    } catch (e) {
      return { path: "", message: oneLine((e as Error).message) };
    } finally {
      // Compiled schemas are not used later; drop them so the ajv instance does not grow and
      // two agents may use the same $id. (They must be added while compiling: a root `$ref: "#"`
      // resolves through the registered schema.) Nested `$id`s are registered as refs that
      // removeSchema leaves behind: one leaked entry per distinct id otherwise.
      ajv.removeSchema(schema);
      for (const ref of Object.keys(ajv.refs)) if (!knownRefs.has(ref)) delete (ajv.refs as Record<string, unknown>)[ref];
    }
  }
}

/**
 * Compiles every pattern at a position where the schema's keywords make it one, including
 * those ajv would skip (an unreferenced `$defs` entry, `patternProperties` whose subschemas
 * all accept anything): a payload checker with another validator would still compile them.
 * Returns the first that cannot be used, at its path. Iterative, like every walk over agents'
 * schemas; data keywords (`const`, `enum`, `default`, `examples`) are never entered.
 */
function patternProblem(schema: object): SchemaProblem | null {
  const stack: Array<{ node: unknown; path: string }> = [{ node: schema, path: "" }];
  const at = (path: string, key: string) => (path ? `${path}.${key}` : key);
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (!isObject(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      const patterns = key === "pattern" && typeof value === "string" ? [value] : key === "patternProperties" && isObject(value) ? Object.keys(value) : [];
      for (const p of patterns) {
        try {
          compilePattern(p);
        } catch (e) {
          if (e instanceof PatternError) return { path: at(path, key), message: e.message };
          throw e;
        }
      }
      for (const [sub, v] of subschemas(key, value)) stack.push({ node: v, path: at(path, sub) });
    }
  }
  return null;
}

const isObject = (v: unknown): v is object => typeof v === "object" && v !== null && !Array.isArray(v);
const oneLine = (s: string): string => s.replace(/\s+/g, " ").slice(0, 300);
