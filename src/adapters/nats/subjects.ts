/**
 * Every subject of PROTOCOL.md, built from the configurable prefix. The service, the SDK
 * and the CLI all build subjects here, so they cannot drift apart.
 */

export const QUERY_OPS = ["lookup", "get", "list", "capabilities", "route", "find", "search", "discover"] as const;
export type QueryOp = (typeof QUERY_OPS)[number];

export const EVENT_TYPES = [
  "registry.agent.registered",
  "registry.agent.deregistered",
  "registry.agent.status_changed",
  "registry.capability.changed",
  "registry.agent.heartbeat",
  "registry.alert.self_preservation",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const SERVICE_NAME = "agent-registry";
export const SERVICE_QUEUE = "agent-registry";

export type Subjects = ReturnType<typeof subjects>;

export function subjects(prefix = "registry") {
  return {
    prefix,
    register: (agentType: string) => `${prefix}.register.${agentType}`,
    heartbeat: (agentType: string, instanceId: string) => `${prefix}.heartbeat.${agentType}.${instanceId}`,
    deregisterInstance: (agentType: string, instanceId: string) => `${prefix}.deregister.${agentType}.${instanceId}`,
    deregisterType: (agentType: string) => `${prefix}.deregister.${agentType}`,
    /** `registry.<op>` for shared agents, `registry.tenant.<tenant>.<op>` for a tenant's view. */
    query: (op: QueryOp, tenant?: string | null) => (tenant ? `${prefix}.tenant.${tenant}.${op}` : `${prefix}.${op}`),
    /**
     * Event subjects: the event type with the configured prefix in place of `registry`,
     * then the agent_type or capability. `registry.agent.registered.<agent_type>`.
     */
    event: (type: EventType, subject: string) => `${prefix}${type.slice("registry".length)}.${subject}`,
    /** Subjects of the stored events: every event type but heartbeats. */
    storedEvents: [
      `${prefix}.agent.registered.>`,
      `${prefix}.agent.deregistered.>`,
      `${prefix}.agent.status_changed.>`,
      `${prefix}.capability.changed.>`,
      `${prefix}.alert.>`,
    ],
    /** Every event, stored or not (heartbeats are core NATS only). */
    allEvents: [`${prefix}.agent.>`, `${prefix}.capability.>`, `${prefix}.alert.>`],
  };
}
