/**
 * Checks that capability input/output schemas compile (PROTOCOL.md section 3). Schemas
 * come from agents, so ajv runs with `$data` off, no remote loader (a remote `$ref` fails
 * to resolve), strict keywords, no logging of generated code, and bounds that the docs state
 * (docs/reliability.md): size, nesting and node count are checked by an iterative walk before
 * anything recursive (JSON.stringify, ajv) touches the schema, because ajv's compile time
 * grows faster than linearly with the node count; patterns are checked for backtracking shapes
 * (pattern-risk.ts). Verdicts are cached by the schema's text, within a budget of characters,
 * so an agent that re-registers the same spec does not pay for compilation again.
 */
import { Ajv, type Options } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { patternRisk } from "./pattern-risk.js";

/** Largest schema accepted, as JSON text. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Most objects and arrays in one schema: compile time is bounded by it (docs/reliability.md). */
export const MAX_SCHEMA_NODES = 256;
/** Deepest nesting of objects and arrays in one schema. */
export const MAX_SCHEMA_DEPTH = 64;
/** Longest `pattern` accepted; longer patterns are where catastrophic backtracking hides. */
export const MAX_PATTERN_LENGTH = 512;
/** Characters of schema text the verdict cache may hold (keys are the schemas' text). */
const CACHE_MAX_CHARS = 8 * 1024 * 1024;

const AJV_OPTIONS: Options = {
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
};
const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";

export class SchemaChecker {
  /** draft-07 (the default, and what most tool schemas are) and 2020-12 when a schema declares it. */
  private readonly draft7 = new Ajv(AJV_OPTIONS);
  private readonly draft2020 = new Ajv2020(AJV_OPTIONS);
  private readonly cache = new Map<string, string | null>();
  private cachedChars = 0;

  /** null when the schema compiles, else a one-line reason. */
  check(schema: unknown): string | null {
    if (typeof schema === "boolean") return null;
    const shape = inspect(schema);
    if (typeof shape === "string") return shape;
    const text = JSON.stringify(schema);
    const cached = this.cache.get(text);
    if (cached !== undefined) return cached;
    if (text.length > MAX_SCHEMA_BYTES) return `schema is ${text.length} bytes; the limit is ${MAX_SCHEMA_BYTES}`;
    const result = shape.patternProblem ?? this.compile(schema);
    this.remember(text, result);
    return result;
  }

  private remember(text: string, result: string | null): void {
    while (this.cache.size > 0 && this.cachedChars + text.length > CACHE_MAX_CHARS) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
      this.cachedChars -= oldest.length;
    }
    this.cache.set(text, result);
    this.cachedChars += text.length;
  }

  private compile(schema: unknown): string | null {
    const ajv = (schema as { $schema?: unknown }).$schema === DRAFT_2020 || (schema as { $schema?: unknown }).$schema === `${DRAFT_2020}#` ? this.draft2020 : this.draft7;
    const knownRefs = new Set(Object.keys(ajv.refs));
    try {
      ajv.compile(schema as object);
      return null;
    } catch (e) {
      return oneLine((e as Error).message);
    } finally {
      // Compiled schemas are not used later; drop them so the ajv instance does not grow and
      // two agents may use the same $id. (They must be added while compiling: a root `$ref: "#"`
      // resolves through the registered schema.) Nested `$id`s are registered as refs that
      // removeSchema leaves behind: one leaked entry per distinct id otherwise.
      ajv.removeSchema(schema as object);
      for (const ref of Object.keys(ajv.refs)) if (!knownRefs.has(ref)) delete (ajv.refs as Record<string, unknown>)[ref];
    }
  }
}

/**
 * One iterative pass over the schema: its node count and depth (stopping at the first bound
 * crossed, so an enormous or cyclic object graph costs no more than the bound) and the first
 * `pattern` / `patternProperties` key that is too long or backtracks.
 */
function inspect(schema: unknown): string | { patternProblem: string | null } {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: schema, depth: 1 }];
  let nodes = 0;
  let patternProblem: string | null = null;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (++nodes > MAX_SCHEMA_NODES) return `schema has more than ${MAX_SCHEMA_NODES} objects and arrays; the limit is ${MAX_SCHEMA_NODES}`;
    if (depth > MAX_SCHEMA_DEPTH) return `schema nests more than ${MAX_SCHEMA_DEPTH} levels deep; the limit is ${MAX_SCHEMA_DEPTH}`;
    for (const [key, value] of Object.entries(node)) {
      if (patternProblem === null && !Array.isArray(node)) patternProblem = badPattern(key, value);
      if (typeof value === "object" && value !== null) stack.push({ node: value, depth: depth + 1 });
    }
  }
  return { patternProblem };
}

function badPattern(key: string, value: unknown): string | null {
  if (!((key === "pattern" && typeof value === "string") || (key === "patternProperties" && isObject(value)))) return null;
  const patterns = key === "pattern" ? [value as string] : Object.keys(value as object);
  for (const p of patterns) {
    if (p.length > MAX_PATTERN_LENGTH) return `pattern is ${p.length} characters; the limit is ${MAX_PATTERN_LENGTH}`;
    const risk = patternRisk(p);
    if (risk) return risk;
  }
  return null;
}

const isObject = (v: unknown): v is object => typeof v === "object" && v !== null && !Array.isArray(v);
const oneLine = (s: string): string => s.replace(/\s+/g, " ").slice(0, 300);
