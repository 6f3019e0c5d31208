/**
 * Every subject of PROTOCOL.md, built from the configurable prefix. The service, the SDK
 * and the CLI all build subjects here, so they cannot drift apart.
 */
import { EVENT_TYPE_ROOT, STORED_EVENT_TYPES, type EventType } from "./events.js";

export const QUERY_OPS = ["lookup", "get", "list", "capabilities", "route", "find", "search", "discover", "card", "toolspec", "check", "graph", "sbom", "schemas", "schema"] as const;
export type QueryOp = (typeof QUERY_OPS)[number];
/**
 * Ops answered by the audit mirror (PROTOCOL.md section 12), not by the registry service: kept
 * apart from QUERY_OPS so the registry never subscribes to them.
 */
export const MIRROR_OPS = ["history"] as const;
export type MirrorOp = (typeof MIRROR_OPS)[number];

/** The NATS micro service every endpoint belongs to, and its queue group. */
export const SERVICE_NAME = "agent-registry";
export const SERVICE_QUEUE = "agent-registry";
export const DEFAULT_PREFIX = "registry";

export type Subjects = ReturnType<typeof subjects>;

export function subjects(prefix = DEFAULT_PREFIX) {
  /** The event type with the configured prefix in place of `registry`. */
  const eventRoot = (type: EventType) => `${prefix}${type.slice(EVENT_TYPE_ROOT.length)}`;
  return {
    prefix,
    register: (agentType: string) => `${prefix}.register.${agentType}`,
    heartbeat: (agentType: string, instanceId: string) => `${prefix}.heartbeat.${agentType}.${instanceId}`,
    deregisterInstance: (agentType: string, instanceId: string) => `${prefix}.deregister.${agentType}.${instanceId}`,
    deregisterType: (agentType: string) => `${prefix}.deregister.${agentType}`,
    /** `registry.schema.put.<name>`: stores one version of a named schema (PROTOCOL.md section 11.1). */
    schemaPut: (name: string) => `${prefix}.schema.put.${name}`,
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
    allEvents: [`${prefix}.agent.>`, `${prefix}.capability.>`, `${prefix}.alert.>`],
  };
}
