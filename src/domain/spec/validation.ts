/**
 * AgentSpec validation (PROTOCOL.md section 3): a raw spec becomes a typed AgentSpec or a
 * RegistryError that names every problem with its path. Nothing is stored before this passes.
 */
import type { z } from "zod";
import { invalidSpec, type ErrorIssue } from "../errors.js";
import { agentSpecSchema, isPlainObject, unknownSpecFields, type AgentSpec } from "./spec.js";
import type { SchemaChecker, SchemaVerdict } from "./schema-check.js";
import { resolveRefs } from "../schemas/schema-refs.js";

const MAX_ISSUES = 20;

export function toIssues(error: z.ZodError, prefix = "", max = MAX_ISSUES): ErrorIssue[] {
  return error.issues.slice(0, max).map((issue) => {
    const path = issue.path.map(String).join(".");
    return { path: prefix && path ? `${prefix}.${path}` : prefix || path, message: issue.message };
  });
}

export type ValidatedSpec = { spec: AgentSpec; warnings: string[] };

/**
 * Paces work a check does on the caller's thread and charges it (service/work-slices.ts):
 * `next()` is awaited between two items, `off(wait)` runs a wait that is not work (for the
 * workers' compilations, charged by the milliseconds they report). Either may throw, to stop
 * the work (a budget spent).
 */
export interface WorkPacer {
  next(): Promise<void> | undefined;
  off<T>(wait: () => Promise<T>): Promise<T>;
}

/**
 * Checks a spec's capability schemas, in the order `specSchemas` lists them, and reports the
 * milliseconds of compilation they cost (0 for cached verdicts). The service's implementation
 * compiles in worker threads, off the event loop that answers queries (service/registration/schema-checks.ts),
 * and paces what it does on the loop with `pacer` when given one.
 */
export interface SchemaChecks {
  checkAll(schemas: readonly unknown[], pacer?: WorkPacer): Promise<{ verdicts: SchemaVerdict[]; ms: number }>;
}

/** The schemas of a spec that must compile: each capability's input then output schema. */
export function specSchemas(spec: AgentSpec): unknown[] {
  return spec.capabilities.flatMap((cap) => [cap.input_schema, cap.output_schema]);
}

/**
 * The cheap part of validating an AgentSpec (shape and defaults with zod), done before any
 * schema is compiled; throws invalid_spec when the shape is wrong.
 */
export function parseSpec(raw: unknown, maxIssues = MAX_ISSUES): AgentSpec {
  if (!isPlainObject(raw)) throw invalidSpec("spec must be a JSON object", [{ path: "", message: "expected an object" }]);
  const result = agentSpecSchema.safeParse(raw);
  if (!result.success) {
    const issues = toIssues(result.error, "", maxIssues);
    throw invalidSpec(`spec is invalid: ${describeIssues(issues)}`, issues);
  }
  return result.data;
}

/**
 * The rest of PROTOCOL.md section 3, given the verdicts of `specSchemas(spec)`: unique
 * capability names and schemas that compile. Unknown fields are dropped and returned as
 * warnings. Issue paths are relative to the spec (`capabilities.0.name`,
 * `capabilities.1.input_schema.properties.q.pattern`). `maxIssues` bounds what an error names
 * (a reply must fit NATS max_payload); the CLI, printing locally, names them all.
 */
export function finishSpec(raw: unknown, spec: AgentSpec, verdicts: readonly SchemaVerdict[], maxIssues = MAX_ISSUES): ValidatedSpec {
  const issues: ErrorIssue[] = [];
  const seen = new Map<string, number>();
  spec.capabilities.forEach((cap, i) => {
    const first = seen.get(cap.name);
    if (first !== undefined) {
      issues.push({ path: `capabilities.${i}.name`, message: `duplicate capability name "${cap.name}" (also at capabilities.${first})` });
    } else seen.set(cap.name, i);
    (["input_schema", "output_schema"] as const).forEach((field, k) => {
      const problem = verdicts[2 * i + k];
      if (problem) issues.push({ path: [`capabilities.${i}.${field}`, problem.path].filter(Boolean).join("."), message: `schema does not compile: ${problem.message}` });
    });
  });
  if (issues.length > 0) throw invalidSpec(`spec is invalid: ${describeIssues(issues)}`, issues.slice(0, maxIssues));
  // Named one by one up to MAX_ISSUES: a spec with 27,000 unknown keys fits the body limit, but
  // naming them all made the reply larger than NATS max_payload, so the stored registration was
  // answered with `internal`.
  const unknown = unknownSpecFields(raw);
  const warnings = unknown.slice(0, MAX_ISSUES).map((path) => `${path}: unknown field, not stored`);
  if (unknown.length > MAX_ISSUES) warnings.push(`and ${unknown.length - MAX_ISSUES} more unknown fields, not stored`);
  return { spec, warnings };
}

/**
 * Validates an AgentSpec in process, compiling its schemas on the caller's thread: the CLI's
 * `validate` and tests. The service and the CLI apply the same rules, so they accept and
 * refuse the same specs.
 */
export function validateSpec(raw: unknown, checker: SchemaChecker, maxIssues = MAX_ISSUES): ValidatedSpec {
  const spec = parseSpec(raw, maxIssues);
  return finishSpec(raw, spec, specSchemas(spec).map((s) => checker.verdict(withAnyNamedSchema(s))), maxIssues);
}

/**
 * Offline the stored schemas are unknown: each `{"$ref": "#Name:Version"}` is compiled as a
 * schema that accepts anything, so the rest of the schema is still checked; whether the ref
 * resolves is the registry's to say (PROTOCOL.md section 11.1). A ref of that form with a bad
 * version is left for the compiler to refuse.
 */
function withAnyNamedSchema(schema: unknown): unknown {
  const r = resolveRefs(schema, () => true, { maxNodes: Number.POSITIVE_INFINITY, missing: "fail" });
  return "problem" in r ? schema : r.schema;
}

export function describeIssues(issues: readonly ErrorIssue[]): string {
  const first = issues[0];
  if (!first) return "invalid";
  const head = `${first.path || "(body)"}: ${first.message}`;
  return issues.length > 1 ? `${head} (and ${issues.length - 1} more)` : head;
}
