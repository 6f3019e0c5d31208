/**
 * Every subject of PROTOCOL.md, built from the configurable prefix. The service, the SDK
 * and the CLI all build subjects here, so they cannot drift apart.
 */
import { EVENT_TYPE_ROOT, STORED_EVENT_TYPES, type EventType } from "./events.js";
import { AGENT_TYPE_RE, INSTANCE_ID_RE, TENANT_RE } from "./ids.js";

export const QUERY_OPS = ["lookup", "get", "list", "capabilities", "route", "find", "search", "discover", "card", "toolspec", "check", "graph", "sbom", "schemas", "schema"] as const;
export type QueryOp = (typeof QUERY_OPS)[number];
/**
 * Ops answered by the audit mirror (PROTOCOL.md section 12), not by the registry service: kept
 * apart from QUERY_OPS so the registry never subscribes to them.
 */
export const MIRROR_OPS = ["history", "history_rates"] as const;
export type MirrorOp = (typeof MIRROR_OPS)[number];

/** The NATS micro service every endpoint belongs to, and its queue group. */
export const SERVICE_NAME = "agent-registry";
export const SERVICE_QUEUE = "agent-registry";
export const DEFAULT_PREFIX = "registry";

export type Subjects = ReturnType<typeof subjects>;

export function subjects(prefix = DEFAULT_PREFIX) {
  /** The event type with the configured prefix in place of `registry`. */
  const eventRoot = (type: EventType) => `${prefix}${type.slice(EVENT_TYPE_ROOT.length)}`;
  /** Writes of a tenant's agents go under `<prefix>.tenant.<tenant>.`, shared agents' under `<prefix>.` (v1.2). */
  const root = (tenant: string | null | undefined) => (tenant ? `${prefix}.tenant.${tenant}` : prefix);
  return {
    prefix,
    register: (agentType: string, tenant?: string | null) => `${root(tenant)}.register.${agentType}`,
    heartbeat: (agentType: string, instanceId: string, tenant?: string | null) => `${root(tenant)}.heartbeat.${agentType}.${instanceId}`,
    deregisterInstance: (agentType: string, instanceId: string, tenant?: string | null) => `${root(tenant)}.deregister.${agentType}.${instanceId}`,
    deregisterType: (agentType: string, tenant?: string | null) => `${root(tenant)}.deregister.${agentType}`,
    /** `registry.schema.put.<name>`: stores one version of a named schema (PROTOCOL.md section 11.1). */
    schemaPut: (name: string) => `${prefix}.schema.put.${name}`,
    /**
     * v1.2, operators only (docs/trust.md, "The approval gate"): `registry.approval.approve.<agent_type>`,
     * `registry.approval.reject.<agent_type>` and `registry.approval.pending`. Never under
     * `registry.tenant.<tenant>.`, where a tenant's coordinators may publish.
     */
    approve: (agentType: string) => `${prefix}.approval.approve.${agentType}`,
    reject: (agentType: string) => `${prefix}.approval.reject.${agentType}`,
    pending: `${prefix}.approval.pending`,
    /**
     * v1.2, operators only (docs/trust.md, "Trust roots in the bucket"): `registry.trust.set.<tenant>`,
     * `registry.trust.get.<tenant>` and `registry.trust.delete.<tenant>`. Never under
     * `registry.tenant.<tenant>.`, where a tenant's coordinators may publish.
     */
    trustSet: (tenant: string) => `${prefix}.trust.set.${tenant}`,
    trustGet: (tenant: string) => `${prefix}.trust.get.${tenant}`,
    trustDelete: (tenant: string) => `${prefix}.trust.delete.${tenant}`,
    /** v1.2, operators only (docs/trust.md, "Deprecation"): `registry.approval.deprecate.<agent_type>` and `.undeprecate.<agent_type>`. */
    deprecate: (agentType: string) => `${prefix}.approval.deprecate.${agentType}`,
    undeprecate: (agentType: string) => `${prefix}.approval.undeprecate.${agentType}`,
    /** `registry.<op>` for shared agents, `registry.tenant.<tenant>.<op>` for a tenant's view. */
    query: (op: QueryOp | MirrorOp, tenant?: string | null) => (tenant ? `${prefix}.tenant.${tenant}.${op}` : `${prefix}.${op}`),
    /** Event subjects: `registry.agent.registered.<agent_type>`, `registry.capability.changed.<capability>`. */
    event: (type: EventType, subject: string) => `${eventRoot(type)}.${subject}`,
    /** Alerts are about the fleet, not one agent: `registry.alert.self_preservation`, no further token. */
    alert: (type: EventType) => eventRoot(type),
    /** Subjects of the stored events: every event type but heartbeats, and any alert. */
    storedEvents: [
      ...new Set(STORED_EVENT_TYPES.map((t) => (t.startsWith(`${EVENT_TYPE_ROOT}.alert.`) ? `${prefix}.alert.>` : `${eventRoot(t)}.>`))),
    ],
    /**
     * Reserved for replicas, outside the client protocol: memory liveness's heard fan-out,
     * `<prefix>._replica.heard.<replica>` (docs/architecture.md, "Scale").
     */
    replicaHeard: `${prefix}._replica.heard`,
    /** Every event, stored or not (heartbeats are core NATS only). */
    allEvents: [`${prefix}.agent.>`, `${prefix}.capability.>`, `${prefix}.alert.>`, `${prefix}.trust.roots_changed.>`],
  };
}

export const WRITE_OPS = ["register", "heartbeat", "deregister", "deregister_type"] as const;
export type WriteOp = (typeof WRITE_OPS)[number];

/** A write subject read back: who writes (the tenant, null for a shared agent) and as what. */
export type WriteSubject = {
  readonly op: WriteOp;
  /** The tenant of `<prefix>.tenant.<tenant>.<op>...`; null on the plain form. */
  readonly tenant: string | null;
  readonly agentType: string;
  /** heartbeat and deregister of one instance only. */
  readonly instanceId?: string;
};

/** A write subject whose shape is right but one token breaks its rule (PROTOCOL.md section 1). */
export type BadWriteToken = { readonly token: "tenant" | "agent_type" | "instance_id"; readonly value: string; readonly rule: RegExp };

/**
 * Reads the tokens after the prefix of a write subject, in either form (v1.2):
 * `register.<type>`, `heartbeat.<type>.<id>`, `deregister.<type>[.<id>]`, or any of them after
 * `tenant.<tenant>.`. Null when the tokens are no write subject at all; the first token that
 * breaks its rule otherwise. The subject's tokens are the writer's identity, so this is the one
 * place that says which token is which.
 */
export function parseWriteSubject(tokens: readonly string[]): WriteSubject | BadWriteToken | null {
  let tenant: string | null = null;
  let rest = tokens;
  if (tokens[0] === "tenant") {
    tenant = tokens[1] ?? "";
    rest = tokens.slice(2);
  }
  const [verb, agentType, instanceId, ...extra] = rest;
  if (agentType === undefined || extra.length > 0) return null;
  let op: WriteOp;
  if (verb === "register" && instanceId === undefined) op = "register";
  else if (verb === "heartbeat" && instanceId !== undefined) op = "heartbeat";
  else if (verb === "deregister") op = instanceId === undefined ? "deregister_type" : "deregister";
  else return null;
  if (tenant !== null && !TENANT_RE.test(tenant)) return { token: "tenant", value: tenant, rule: TENANT_RE };
  if (!AGENT_TYPE_RE.test(agentType)) return { token: "agent_type", value: agentType, rule: AGENT_TYPE_RE };
  if (instanceId !== undefined && !INSTANCE_ID_RE.test(instanceId)) return { token: "instance_id", value: instanceId, rule: INSTANCE_ID_RE };
  return instanceId === undefined ? { op, tenant, agentType } : { op, tenant, agentType, instanceId };
}
