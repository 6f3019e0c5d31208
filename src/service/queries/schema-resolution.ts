/**
 * Capability schemas as queries return them: with their named refs inlined (PROTOCOL.md
 * section 11.1). Resolution happens once per schema object and set of stored schemas: the
 * result is kept per schema object (the view shares equal schemas as one object) and
 * recomputed only after a schema was added or removed, so a lookup pays a map read, and the
 * payload checker, which keys its compiled validators by schema text, compiles a resolved
 * schema once for every agent that uses it.
 *
 * A ref whose schema is not in the store (deleted by hand: the API never deletes one) does not
 * fail the query: the ref is served as it is, counted, and logged once per schema version, so
 * lookups keep answering while an operator puts the schema back.
 */
import type { JsonSchema } from "../../protocol/spec.js";
import type { AgentSpec, Capability } from "../../domain/spec/spec.js";
import type { SchemaBook } from "../../domain/schemas/schema-book.js";
import { refKey, resolveRefs, type RefAt } from "../../domain/schemas/schema-refs.js";
import { MAX_SCHEMA_NODES } from "../../domain/spec/schema-check.js";
import { ErrorCode, RegistryError } from "../../domain/errors.js";

/** Schema versions whose absence is logged before the rest are only counted. */
const MAX_LOGGED_MISSING = 1000;

type Entry = { readonly generation: number; readonly schema: JsonSchema; readonly missing: readonly RefAt[]; readonly problem?: string };

export type ResolutionHooks = {
  /** A ref served unresolved because its schema is not stored (counted once per schema object and change of the schemas). */
  onMissing?: (ref: RefAt) => void;
  /** First time a schema version is found missing, or a schema cannot be resolved (a cycle, too large): for the log. */
  onProblem?: (message: string, detail: Record<string, unknown>) => void;
};

export class SchemaResolution {
  private readonly resolved = new WeakMap<object, Entry>();
  private readonly specs = new WeakMap<AgentSpec, { generation: number; spec: AgentSpec }>();
  private readonly logged = new Set<string>();

  constructor(
    private readonly book: SchemaBook,
    private readonly hooks: ResolutionHooks = {},
  ) {}

  /** The schema with its refs inlined; a ref that cannot be resolved is left as it is. */
  schema(schema: JsonSchema): JsonSchema {
    return this.entry(schema).schema;
  }

  /**
   * The schema a payload is checked against: a missing schema here is 503, not a verdict, as
   * checking against a schema with a hole would pass what the agent refuses.
   */
  forCheck(schema: JsonSchema): JsonSchema {
    const e = this.entry(schema);
    if (e.problem !== undefined) throw new RegistryError(ErrorCode.Unavailable, `this capability's schema cannot be resolved from the stored schemas (${e.problem}); an operator must fix the store`);
    const first = e.missing[0];
    if (first) throw new RegistryError(ErrorCode.Unavailable, `schema ${first.name} version ${first.version}, which this capability refers to, is missing from the store; an operator must put it again`);
    return e.schema;
  }

  /** The capability with both schemas resolved (the same object when neither has refs). */
  capability(cap: Capability): Capability {
    const input = this.schema(cap.input_schema);
    const output = this.schema(cap.output_schema);
    return input === cap.input_schema && output === cap.output_schema ? cap : { ...cap, input_schema: input, output_schema: output };
  }

  /** The spec with every capability's schemas resolved (for the tool spec export). */
  spec(spec: AgentSpec): AgentSpec {
    const generation = this.book.generation;
    const kept = this.specs.get(spec);
    if (kept && kept.generation === generation) return kept.spec;
    const caps = spec.capabilities.map((c) => this.capability(c));
    const out = caps.every((c, i) => c === spec.capabilities[i]) ? spec : { ...spec, capabilities: caps };
    this.specs.set(spec, { generation, spec: out });
    return out;
  }

  private entry(schema: JsonSchema): Entry {
    if (typeof schema !== "object") return { generation: 0, schema, missing: [] };
    const generation = this.book.generation;
    const kept = this.resolved.get(schema);
    if (kept && kept.generation === generation) return kept;
    // Expansions of stored schemas are shared with the other schemas and the writes (resolved-ref-cache.ts).
    const r = resolveRefs(schema, this.book.source, { maxNodes: MAX_SCHEMA_NODES, missing: "keep", memo: this.book.resolved.shared() });
    let entry: Entry;
    if ("problem" in r) {
      // Only a store changed by hand gets here: every ref resolved when the spec was registered.
      this.logOnce(`problem:${r.problem.message}`, "a capability schema's refs cannot be resolved; served as stored", { path: r.problem.path, problem: r.problem.message });
      entry = { generation, schema, missing: [], problem: r.problem.message };
    } else {
      for (const m of r.missing) {
        this.hooks.onMissing?.(m);
        this.logOnce(refKey(m.name, m.version), "a capability schema refers to a schema missing from the store; served with the ref unresolved", { schema: m.name, version: m.version });
      }
      entry = { generation, schema: r.schema as JsonSchema, missing: r.missing };
    }
    this.resolved.set(schema, entry);
    return entry;
  }

  private logOnce(key: string, message: string, detail: Record<string, unknown>): void {
    if (this.logged.has(key) || this.logged.size >= MAX_LOGGED_MISSING) return;
    this.logged.add(key);
    this.hooks.onProblem?.(message, detail);
  }
}
