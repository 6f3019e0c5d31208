/**
 * Checks that capability input/output schemas compile (PROTOCOL.md section 3). Schemas
 * come from agents, so ajv runs with `$data` off, no remote loader (a remote `$ref` fails
 * to resolve), strict keywords, and bounds on size and pattern shape that the docs state
 * (docs/reliability.md). Results are cached by the schema's text, so an agent that
 * re-registers the same spec does not pay for compilation again.
 */
import { Ajv, type Options } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** Largest schema accepted, as JSON text. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Longest `pattern` accepted; longer patterns are where catastrophic backtracking hides. */
export const MAX_PATTERN_LENGTH = 512;
const CACHE_LIMIT = 10_000;

// Nested quantifiers such as (a+)+ or (\w*)* are the classic exponential-backtracking shape.
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}]\)\s*[+*{]/;

const AJV_OPTIONS: Options = {
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  validateFormats: false,
  $data: false,
  allErrors: false,
};
const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";

export class SchemaChecker {
  /** draft-07 (the default, and what most tool schemas are) and 2020-12 when a schema declares it. */
  private readonly draft7 = new Ajv(AJV_OPTIONS);
  private readonly draft2020 = new Ajv2020(AJV_OPTIONS);
  private readonly cache = new Map<string, string | null>();

  /** null when the schema compiles, else a one-line reason. */
  check(schema: unknown): string | null {
    const text = JSON.stringify(schema);
    const cached = this.cache.get(text);
    if (cached !== undefined) return cached;
    const result = this.compile(schema, text);
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(text, result);
    return result;
  }

  private compile(schema: unknown, text: string): string | null {
    if (typeof schema === "boolean") return null;
    if (text.length > MAX_SCHEMA_BYTES) return `schema is ${text.length} bytes; the limit is ${MAX_SCHEMA_BYTES}`;
    const patternProblem = findBadPattern(schema);
    if (patternProblem) return patternProblem;
    const ajv = (schema as { $schema?: unknown }).$schema === DRAFT_2020 || (schema as { $schema?: unknown }).$schema === `${DRAFT_2020}#` ? this.draft2020 : this.draft7;
    try {
      ajv.compile(schema as object);
      return null;
    } catch (e) {
      return oneLine((e as Error).message);
    } finally {
      // Compiled schemas are not used later; drop them so the ajv instance does not grow and
      // two agents may use the same $id. (They must be added while compiling: a root `$ref: "#"`
      // resolves through the registered schema.)
      ajv.removeSchema(schema as object);
    }
  }
}

function findBadPattern(schema: unknown): string | null {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    for (const [key, value] of Object.entries(node)) {
      if ((key === "pattern" && typeof value === "string") || (key === "patternProperties" && isObject(value))) {
        const patterns = key === "pattern" ? [value as string] : Object.keys(value as object);
        for (const p of patterns) {
          if (p.length > MAX_PATTERN_LENGTH) return `pattern is ${p.length} characters; the limit is ${MAX_PATTERN_LENGTH}`;
          if (NESTED_QUANTIFIER.test(p)) return `pattern ${JSON.stringify(p.slice(0, 80))} nests quantifiers (catastrophic backtracking)`;
        }
      }
      if (typeof value === "object" && value !== null) stack.push(value);
    }
  }
  return null;
}

const isObject = (v: unknown): v is object => typeof v === "object" && v !== null && !Array.isArray(v);
const oneLine = (s: string): string => s.replace(/\s+/g, " ").slice(0, 300);
