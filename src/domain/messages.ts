/**
 * Wire messages of PROTOCOL.md section 2 as zod schemas; the types come from z.infer.
 * Objects are loose where the protocol allows extra fields (forward compatibility for
 * clients written against a newer protocol) and the spec itself is validated separately.
 */
import { bucketTenantTrust } from "./trust/bucket-trust.js";
import { z } from "zod";
import { MAX_LIST_AGENT_TYPES, MAX_PAGE_LIMIT, QUERY_SCOPES } from "../protocol/messages.js";
import { invalidRequest, type ErrorIssue } from "./errors.js";
import { describeIssues, toIssues } from "./spec/validation.js";
import type { InstanceStatus } from "./model/model.js";
import { capabilityName, instanceId, agentType } from "./spec/spec.js";
import { AGENT_KINDS } from "../protocol/spec.js";
import { AGENT_TYPE_RE, SCHEMA_NAME_RE, SCHEMA_VERSION_RE } from "../protocol/ids.js";

const statusValue = z.enum(["registered", "ready", "draining", "deregistered"]);
const minRevision = z.number().int().min(0).optional();
const scope = z.enum(QUERY_SCOPES).optional();
const pageLimit = z.number().int().min(1).max(MAX_PAGE_LIMIT).optional();
const cursor = z.string().max(512).nullable().optional();
/** Entries of one kind only (PROTOCOL.md section 10.2). */
const kind = z.enum(AGENT_KINDS).optional();
/** Capabilities whose annotations.readOnlyHint is true only; false or absent: no filter. */
const readOnly = z.boolean().optional();
/** v1.2: providers whose stored spec was verified against its tenant's trust roots only (docs/trust.md). */
const verifiedOnly = z.boolean().optional();

/**
 * A register body. Its spec comes in one of four forms (spec, a2a_card, mcp_toolspec, mcp_server) with the
 * fields that complete a card or a tool spec beside it; domain/interop/register-body.ts reads
 * them (and refuses a mix), the spec validation judges the result.
 */
export const registerMessage = z.object({
  // Each optional: zod 4 refuses an absent key for a bare z.unknown(), which turned away every
  // body carrying a2a_card or mcp_toolspec instead of spec.
  spec: z.unknown().optional(),
  a2a_card: z.unknown().optional(),
  mcp_toolspec: z.unknown().optional(),
  // v1.2: an MCP Registry server.json (domain/interop/mcp/server-json.ts).
  mcp_server: z.unknown().optional(),
  agent_type: z.unknown().optional(),
  strict: z.unknown().optional(),
  kind: z.unknown().optional(),
  description: z.unknown().optional(),
  version: z.unknown().optional(),
  owner_team: z.unknown().optional(),
  url: z.unknown().optional(),
  nats_subject: z.unknown().optional(),
  consumer_group: z.unknown().optional(),
  tenant_scope: z.unknown().optional(),
  instance_id: instanceId.optional(),
  heartbeat_interval_ms: z.number().int().positive().optional(),
  status: z.enum(["registered", "ready"]).optional(),
  metadata: z.record(z.string().max(256), z.string().max(4096)).optional(),
  // Overwrite a different spec stored under the same version (PROTOCOL.md section 9).
  replace: z.boolean().optional(),
  // v1.2: a detached JWS over the JCS form of `spec` (docs/trust.md); bounded by the trust gate.
  signature: z.unknown().optional(),
});
export type RegisterMessage = z.infer<typeof registerMessage>;

export const heartbeatMessage = z.object({
  status: z.enum(["ready", "draining", "registered"]).optional(),
  active_tasks: z.number().int().min(0).optional(),
});
export type HeartbeatMessage = z.infer<typeof heartbeatMessage>;

export const deregisterMessage = z.object({ reason: z.string().max(1024).optional() });
export type DeregisterMessage = z.infer<typeof deregisterMessage>;

export const lookupQuery = z.object({
  capability: capabilityName,
  status: z.array(statusValue).min(1).optional(),
  version: z.string().max(256).optional(),
  kind,
  read_only: readOnly,
  verified_only: verifiedOnly,
  limit: pageLimit,
  cursor,
  scope,
  min_revision: minRevision,
});
export type LookupQuery = z.infer<typeof lookupQuery>;

export const getQuery = z.object({ agent_type: agentType, instances_limit: pageLimit, instances_cursor: cursor, min_revision: minRevision });

export const listQuery = z.object({
  status: z.array(statusValue).min(1).optional(),
  owner_team: z.string().max(256).optional(),
  tags: z.record(z.string().max(256), z.string().max(4096)).optional(),
  capability: capabilityName.optional(),
  kind,
  /** v1.2: these agent types only (a batch of `get`s in one request); unknown ones are left out. */
  agent_types: z.array(agentType).min(1).max(MAX_LIST_AGENT_TYPES).optional(),
  /** v1.2: at most this many instances in each agent's view (all that fit, unset). */
  instances_limit: pageLimit,
  limit: z.number().int().min(1).max(1000).optional(),
  cursor,
  min_revision: minRevision,
});
export type ListQuery = z.infer<typeof listQuery>;

export const capabilitiesQuery = z.object({
  status: z.array(statusValue).min(1).optional(),
  schemas: z.boolean().optional(),
  limit: pageLimit,
  cursor,
  min_revision: minRevision,
});

export const routeQuery = z.object({
  skill: capabilityName.optional(),
  tags: z.array(z.string().min(1).max(256)).max(64).optional(),
  preferred_runtime: z.string().min(1).max(128).optional(),
  verified_only: verifiedOnly,
  scope,
  min_revision: minRevision,
});

export const findQuery = z
  .object({
    skill: capabilityName.optional(),
    tag: z.string().min(1).max(256).optional(),
    name: z.string().min(1).max(256).optional(),
    verified_only: verifiedOnly,
    limit: pageLimit,
    cursor,
    scope,
    min_revision: minRevision,
  })
  .refine((q) => [q.skill, q.tag, q.name].filter((v) => v !== undefined).length === 1, {
    message: "exactly one of skill, tag, name",
  });

export const searchQuery = z.object({
  query: z.string().min(1).max(1024),
  limit: z.number().int().min(1).max(100).optional(),
  kind,
  read_only: readOnly,
  verified_only: verifiedOnly,
  scope,
  min_revision: minRevision,
});

export type SearchQuery = z.infer<typeof searchQuery>;

export const discoverQuery = z.object({ capability: capabilityName.optional(), kind, verified_only: verifiedOnly, limit: pageLimit, cursor, scope, min_revision: minRevision });
export type DiscoverQuery = z.infer<typeof discoverQuery>;

/** Export of one agent as an A2A card (PROTOCOL.md section 10.3); v1.0 unless asked for v0.3. */
export const cardQuery = z.object({ agent_type: agentType, a2a_version: z.enum(["1.0", "0.3"]).optional(), min_revision: minRevision });
/** Export of one agent's capabilities as MCP tools (PROTOCOL.md section 10.3). */
export const toolspecQuery = z.object({ agent_type: agentType, min_revision: minRevision });
/** A payload checked against a capability's schema (PROTOCOL.md section 11.4); `payload` must be present (null is a payload). */
export const checkQuery = z.object({
  capability: capabilityName,
  agent_type: agentType.optional(),
  direction: z.enum(["input", "output"]).optional(),
  payload: z.unknown().refine((v) => v !== undefined, "required: the payload to check"),
  min_revision: minRevision,
});

/** An agent type's dependencies or dependents, or the fleet's graph (PROTOCOL.md section 11.2). */
export const graphQuery = z.object({
  agent_type: agentType.optional(),
  direction: z.enum(["dependencies", "dependents"]).optional(),
  depth: z.number().int().min(1).max(16).optional(),
  min_revision: minRevision,
});

/** The fleet's SBOM, or one agent's dependency closure's (PROTOCOL.md section 11.2). */
export const sbomQuery = z.object({ format: z.enum(["cyclonedx", "spdx"]).optional(), agent_type: agentType.optional(), min_revision: minRevision });
/** A schema name (PROTOCOL.md section 11.1): also a subject token of `registry.schema.put.<name>`. */
export const schemaName = z.string().regex(SCHEMA_NAME_RE, "must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$");
const schemaVersion = z.string().max(256).regex(SCHEMA_VERSION_RE, "must be an exact semver version X.Y.Z (optional -prerelease, no build metadata)");

/** The body of `registry.schema.put.<name>`; the schema itself is checked (limits, refs, compilation) by the schema registrar. */
export const schemaPutMessage = z.object({
  version: schemaVersion,
  schema: z.union([z.record(z.string(), z.unknown()), z.boolean()]),
  description: z.string().max(4096).optional(),
});
export type SchemaPutMessage = z.infer<typeof schemaPutMessage>;

export const schemasQuery = z.object({ name: schemaName.optional(), limit: z.number().int().min(1).max(1000).optional(), cursor, min_revision: minRevision });
export type SchemasQuery = z.infer<typeof schemasQuery>;
export const schemaQuery = z.object({ name: schemaName, version: schemaVersion, min_revision: minRevision });
export type SchemaQuery = z.infer<typeof schemaQuery>;

/** v1.2, docs/trust.md "The approval gate": who decides (the operator's own words; NATS does not say who sent a request). */
const decidedBy = z.string().min(1).max(256);
/** The version the operator reviewed; the decision is refused if the stored spec is another. */
const reviewedVersion = z.string().min(1).max(256).optional();

/** The spec record's revision the operator reviewed (as get or pending showed it); refused if it changed since. */
const reviewedRevision = z.number().int().min(1).optional();

/** The body of `registry.approval.approve.<agent_type>`. */
export const approveMessage = z.object({ by: decidedBy, version: reviewedVersion, revision: reviewedRevision, reason: z.string().min(1).max(4096).optional() });
export type ApproveMessage = z.infer<typeof approveMessage>;
/** The body of `registry.approval.reject.<agent_type>`: a rejection says why. */
export const rejectMessage = z.object({ by: decidedBy, version: reviewedVersion, revision: reviewedRevision, reason: z.string().min(1).max(4096) });
export type RejectMessage = z.infer<typeof rejectMessage>;
/**
 * The body of `registry.approval.pending`: the specs waiting (or, with `state`, rejected, or
 * withheld by trust: no longer verified under `require`, v1.2), of one tenant or all.
 */
export const pendingQuery = z.object({
  tenant: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "a tenant id").nullable().optional(),
  state: z.enum(["pending", "rejected", "withheld"]).optional(),
  limit: pageLimit,
  cursor,
  min_revision: minRevision,
});
export type PendingQuery = z.infer<typeof pendingQuery>;

/** v1.2, docs/trust.md "Trust roots in the bucket": the store revision of the tenant's entry the operator expects (0: none stored yet). */
const expectedTrustRevision = z.number().int().min(0).optional();

/** The body of `registry.trust.set.<tenant>`: the tenant's entry as the trust file writes one, inline keys only. */
export const trustSetMessage = z.object({ trust: bucketTenantTrust, by: decidedBy.optional(), revision: expectedTrustRevision });
export type TrustSetMessage = z.infer<typeof trustSetMessage>;
/** The body of `registry.trust.delete.<tenant>`. */
export const trustDeleteMessage = z.object({ by: decidedBy.optional(), revision: expectedTrustRevision });
export type TrustDeleteMessage = z.infer<typeof trustDeleteMessage>;
/** The body of `registry.trust.get.<tenant>`: nothing to say. */
export const trustGetMessage = z.object({});
/** The body of `registry.approval.deprecate.<agent_type>` (v1.2, docs/trust.md "Deprecation"): why, and the agent type to use instead. */
export const deprecateMessage = z.object({
  by: decidedBy,
  version: reviewedVersion,
  revision: reviewedRevision,
  reason: z.string().min(1).max(4096).optional(),
  successor: z.string().regex(AGENT_TYPE_RE, "an agent type").optional(),
});
export type DeprecateMessage = z.infer<typeof deprecateMessage>;
/** The body of `registry.approval.undeprecate.<agent_type>`. */
export const undeprecateMessage = z.object({ by: decidedBy, version: reviewedVersion, revision: reviewedRevision, reason: z.string().min(1).max(4096).optional() });
export type UndeprecateMessage = z.infer<typeof undeprecateMessage>;

/**
 * Parses a wire message with its zod schema; failures are `invalid_request`. Unknown fields are
 * ignored (PROTOCOL.md: newer clients may send fields an older registry does not know), but a
 * refused message names them first: `{"capabilty": ...}` is a misspelling, not a missing field.
 */
export function parseMessage<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issues = [...unknownFieldIssues(schema, body), ...toIssues(result.error)];
    throw invalidRequest(`${what}: ${describeIssues(issues)}`, issues);
  }
  return result.data;
}

/** At most this many unknown fields are named, so a body of many keys cannot grow the error. */
const MAX_UNKNOWN_NAMED = 5;

/** An issue per top-level field the message's schema does not know, with the known one it most likely meant. */
function unknownFieldIssues(schema: z.ZodType, body: unknown): ErrorIssue[] {
  if (!(schema instanceof z.ZodObject) || body === null || typeof body !== "object" || Array.isArray(body)) return [];
  const known = Object.keys(schema.shape as Record<string, unknown>);
  const issues: ErrorIssue[] = [];
  for (const key of Object.keys(body)) {
    if (known.includes(key)) continue;
    if (issues.length === MAX_UNKNOWN_NAMED) break;
    const near = known.find((k) => editDistanceAtMost(key.toLowerCase(), k, 2));
    issues.push({ path: key.slice(0, 128), message: near === undefined ? "unknown field" : `unknown field; did you mean ${near}?` });
  }
  return issues;
}

/** Whether two strings are within `max` insertions, deletions or substitutions of each other. */
function editDistanceAtMost(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max || a.length > 64) return false;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]! <= max;
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
