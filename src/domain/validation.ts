/**
 * Validation at the edge: wire messages and AgentSpecs become typed values or a
 * RegistryError that names every problem with its path. Nothing is stored before this passes.
 */
import type { z } from "zod";
import { invalidRequest, invalidSpec, type ErrorIssue } from "./errors.js";
import { agentSpecSchema, isPlainObject, unknownSpecFields, type AgentSpec } from "./spec.js";
import type { SchemaChecker } from "./schema-check.js";
import { heartbeatMessage, type HeartbeatMessage } from "./messages.js";
import type { InstanceStatus } from "./model.js";

const MAX_ISSUES = 20;

export function toIssues(error: z.ZodError, prefix = ""): ErrorIssue[] {
  return error.issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = issue.path.map(String).join(".");
    return { path: prefix && path ? `${prefix}.${path}` : prefix || path, message: issue.message };
  });
}

/** Parses a wire message with its zod schema; failures are `invalid_request`. */
export function parseMessage<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issues = toIssues(result.error);
    throw invalidRequest(`${what}: ${describe(issues)}`, issues);
  }
  return result.data;
}

/**
 * A heartbeat body. The common shapes (`{}`, `status`, `active_tasks`) are checked by hand:
 * at fleet scale (3,300 a second) zod's generic parse was 8% of the registry's allocations.
 * Anything else (an unknown key, a bad value) goes through the zod schema, which stays the
 * definition and words the errors; a unit test holds the two to the same answers.
 */
export function parseHeartbeatMessage(body: Record<string, unknown>): HeartbeatMessage {
  for (const key in body) if (key !== "status" && key !== "active_tasks") return parseMessage(heartbeatMessage, body, "heartbeat");
  const { status, active_tasks: tasks } = body;
  const statusOk = status === undefined || status === "ready" || status === "draining" || status === "registered";
  const tasksOk = tasks === undefined || (typeof tasks === "number" && Number.isSafeInteger(tasks) && tasks >= 0);
  if (!statusOk || !tasksOk) return parseMessage(heartbeatMessage, body, "heartbeat");
  const msg: { status?: InstanceStatus; active_tasks?: number } = {};
  if (status !== undefined) msg.status = status;
  if (tasks !== undefined) msg.active_tasks = tasks;
  return msg;
}

export type ValidatedSpec = { spec: AgentSpec; warnings: string[] };

/**
 * Validates an AgentSpec against PROTOCOL.md section 3: shape and defaults (zod), unique
 * capability names, and input/output schemas that compile. Unknown fields are dropped and
 * returned as warnings. Issue paths are relative to the spec (`capabilities.0.name`).
 */
export function validateSpec(raw: unknown, checker: SchemaChecker): ValidatedSpec {
  if (!isPlainObject(raw)) throw invalidSpec("spec must be a JSON object", [{ path: "", message: "expected an object" }]);
  const result = agentSpecSchema.safeParse(raw);
  if (!result.success) {
    const issues = toIssues(result.error);
    throw invalidSpec(`spec is invalid: ${describe(issues)}`, issues);
  }
  const spec = result.data;
  const issues: ErrorIssue[] = [];
  const seen = new Map<string, number>();
  spec.capabilities.forEach((cap, i) => {
    const first = seen.get(cap.name);
    if (first !== undefined) {
      issues.push({ path: `capabilities.${i}.name`, message: `duplicate capability name "${cap.name}" (also at capabilities.${first})` });
    } else seen.set(cap.name, i);
    for (const field of ["input_schema", "output_schema"] as const) {
      const problem = checker.check(cap[field]);
      if (problem) issues.push({ path: `capabilities.${i}.${field}`, message: `schema does not compile: ${problem}` });
    }
  });
  if (issues.length > 0) throw invalidSpec(`spec is invalid: ${describe(issues)}`, issues.slice(0, MAX_ISSUES));
  // Named one by one up to MAX_ISSUES: a spec with 27,000 unknown keys fits the body limit, but
  // naming them all made the reply larger than NATS max_payload, so the stored registration was
  // answered with `internal`.
  const unknown = unknownSpecFields(raw);
  const warnings = unknown.slice(0, MAX_ISSUES).map((path) => `${path}: unknown field, not stored`);
  if (unknown.length > MAX_ISSUES) warnings.push(`and ${unknown.length - MAX_ISSUES} more unknown fields, not stored`);
  return { spec, warnings };
}

function describe(issues: readonly ErrorIssue[]): string {
  const first = issues[0];
  if (!first) return "invalid";
  const head = `${first.path || "(body)"}: ${first.message}`;
  return issues.length > 1 ? `${head} (and ${issues.length - 1} more)` : head;
}
