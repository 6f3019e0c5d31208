/**
 * Checks that capability input/output schemas compile (PROTOCOL.md section 3), within bounds
 * that the docs state (docs/reliability.md): size, nesting and node count are checked by an
 * iterative walk before anything recursive (JSON.stringify, ajv) touches the schema, because
 * ajv's compile time grows faster than linearly with the node count. That walk is cheap and
 * runs wherever the schema arrives; the compilation (schema-compiler.ts) is the costly part,
 * which the service sends to worker threads and SchemaChecker runs in process.
 */
import { SchemaCompiler, type SchemaVerdict } from "./schema-compiler.js";
import { VerdictCache } from "./verdict-cache.js";
import { subschemas } from "./schema-keywords.js";

export { MAX_PATTERN_LENGTH } from "./linear-regexp.js";
export type { SchemaProblem, SchemaVerdict } from "./schema-compiler.js";

/** Largest schema accepted, as JSON text. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Most objects and arrays in one schema: compile time is bounded by it (docs/reliability.md). */
export const MAX_SCHEMA_NODES = 256;
/** Deepest nesting of objects and arrays in one schema. */
export const MAX_SCHEMA_DEPTH = 64;

/** Either the verdict is known without compiling, or the schema's text to compile (and cache by). */
export type PreparedSchema = { verdict: SchemaVerdict } | { text: string };

/**
 * The cheap half: booleans and `{}` accept everything; a schema over a limit is refused; any
 * other schema must be compiled, and its JSON text is returned for that (and as the cache key).
 */
export function prepareSchema(schema: unknown): PreparedSchema {
  if (typeof schema === "boolean") return { verdict: null };
  const limit = checkLimits(schema);
  if (limit) return { verdict: { path: "", message: limit } };
  const text = JSON.stringify(schema);
  if (text === "{}") return { verdict: null };
  if (text.length > MAX_SCHEMA_BYTES) return { verdict: { path: "", message: `schema is ${text.length} bytes; the limit is ${MAX_SCHEMA_BYTES}` } };
  return { text };
}

/** The one-line form of a verdict: the path inside the schema first, when there is one. */
export const describeVerdict = (v: SchemaVerdict): string | null => (v === null ? null : v.path ? `${v.path}: ${v.message}` : v.message);

/** Both halves in process, with the verdict cache: the CLI, the tests, and each worker thread. */
export class SchemaChecker {
  private readonly compiler = new SchemaCompiler();
  private readonly cache = new VerdictCache();

  verdict(schema: unknown): SchemaVerdict {
    const prepared = prepareSchema(schema);
    if ("verdict" in prepared) return prepared.verdict;
    const cached = this.cache.get(prepared.text);
    if (cached !== undefined) return cached;
    const verdict = this.compiler.compile(schema as object);
    this.cache.set(prepared.text, verdict);
    return verdict;
  }

  /** null when the schema compiles, else a one-line reason. */
  check(schema: unknown): string | null {
    return describeVerdict(this.verdict(schema));
  }
}

/**
 * One iterative pass over the schema: its node count and depth, stopping at the first bound
 * crossed, so an enormous or cyclic object graph costs no more than the bound. A boolean
 * subschema counts as a node too: ajv compiles each one, and 4,000 `"p": false` properties fit
 * in 64 KiB (ajv then overflowed its stack after 5 s on patternProperties).
 */
function checkLimits(schema: unknown): string | null {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: schema, depth: 1 }];
  let nodes = 0;
  const tooMany = `schema has more than ${MAX_SCHEMA_NODES} objects and arrays (boolean subschemas included); the limit is ${MAX_SCHEMA_NODES}`;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (++nodes > MAX_SCHEMA_NODES) return tooMany;
    if (depth > MAX_SCHEMA_DEPTH) return `schema nests more than ${MAX_SCHEMA_DEPTH} levels deep; the limit is ${MAX_SCHEMA_DEPTH}`;
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === "object" && value !== null) stack.push({ node: value, depth: depth + 1 });
      if (!Array.isArray(node)) for (const [, sub] of subschemas(key, value)) if (typeof sub === "boolean" && ++nodes > MAX_SCHEMA_NODES) return tooMany;
    }
  }
  return null;
}
