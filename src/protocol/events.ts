/**
 * Registry events (PROTOCOL.md section 5): their type names, the data each carries, and the
 * CloudEvents 1.0 envelope. The one place event type names are written.
 */
import { isoTime } from "./iso-time.js";
import type { Dependency } from "./spec.js";
import type { InstanceStatus, RemovalReason } from "./states.js";

export const EventType = {
  AgentRegistered: "registry.agent.registered",
  AgentDeregistered: "registry.agent.deregistered",
  AgentStatusChanged: "registry.agent.status_changed",
  CapabilityChanged: "registry.capability.changed",
  /** An extension of PROTOCOL.md section 11.2 (docs/protocol.md, section 8): a dependency stopped being live. */
  DependencyLost: "registry.agent.dependency_lost",
  /** ... and is live again. */
  DependencyRestored: "registry.agent.dependency_restored",
  /** v1.2 (docs/protocol.md section 8): a spec waits for an operator's approval (policy manual, docs/trust.md). */
  AgentPending: "registry.agent.pending",
  /** v1.2: an operator approved the stored spec: it is routable. */
  AgentApproved: "registry.agent.approved",
  /** v1.2: an operator rejected the stored spec (or withdrew an approved one): it is not routable. */
  AgentRejected: "registry.agent.rejected",
  /** v1.2: the stored spec's verification changed without a new spec: trust roots reloaded, or a key's validity ended (docs/trust.md). */
  AgentTrustChanged: "registry.agent.trust_changed",
  /**
   * v1.2: an operator set, replaced or deleted a tenant's trust roots in the bucket
   * (`registry.trust.set.<tenant>`, docs/trust.md); subject `<prefix>.trust.roots_changed.<tenant>`.
   */
  TrustRootsChanged: "registry.trust.roots_changed",
  /** v1.2: an operator marked the agent type deprecated (docs/trust.md, "Deprecation"): still routed, with a warning. */
  AgentDeprecated: "registry.agent.deprecated",
  /** v1.2: an operator withdrew the agent type's deprecation. */
  AgentUndeprecated: "registry.agent.undeprecated",
  /** Core NATS only, never stored. */
  AgentHeartbeat: "registry.agent.heartbeat",
  /** An extension of PROTOCOL.md section 5 (docs/protocol.md, section 8). */
  SelfPreservationAlert: "registry.alert.self_preservation",
  /** Published by the audit mirror when events left the stream before it copied them (PROTOCOL.md section 12). */
  AuditGapAlert: "registry.alert.audit_gap",
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);
/** Every event type the `REGISTRY_EVENTS` stream keeps: all but heartbeats. */
export const STORED_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => t !== EventType.AgentHeartbeat);
/** The first subject token of every event type, replaced by the configured prefix on the wire. */
export const EVENT_TYPE_ROOT = "registry";

export type RegisteredData = {
  agent_type: string;
  version: string;
  instance_id: string;
  tenant_scope: string | null;
  first_instance: boolean;
  spec_changed: boolean;
  /**
   * The registration overwrote a different spec of the same version (`"replace": true` or a
   * registry-file entry; PROTOCOL.md section 9). Absent from events stored before v1.1.
   */
  replaced?: boolean;
  /** v1.2: the instance's status as registered; absent from events stored before. */
  status?: InstanceStatus;
  /** v1.2: false when a live instance registered again and overwrote its spec (`replaced`), the one case of no new instance; absent from events stored before. */
  new_instance?: boolean;
  revision: number;
};
export type DeregisteredData = {
  agent_type: string;
  instance_id: string;
  reason: RemovalReason;
  agent_removed: boolean;
  last_heartbeat: string;
  /** v1.2: the status the instance had when it left; absent from events stored before. */
  status?: InstanceStatus;
  revision: number;
};
export type StatusChangedData = { agent_type: string; instance_id: string; from: InstanceStatus; to: InstanceStatus; revision: number };
export type CapabilityChange = "added" | "removed" | "updated";
export type CapabilityChangedData = { capability: string; change: CapabilityChange; providers: string[]; revision: number };
/** `active_tasks` is null when the heartbeat did not report it. */
export type HeartbeatData = { agent_type: string; instance_id: string; status: InstanceStatus; active_tasks: number | null };
/** What a dependency resolves to (PROTOCOL.md section 11.2, the graph's node states). */
export type DependencyState = "live" | "registered" | "deregistered" | "missing" | "version_mismatch";
/**
 * About the agent type that depends (`agent_type`, the event's subject): which of its
 * dependencies changed (`node` is the graph's id of it), its state now, and the agent types
 * that provide it.
 */
export type DependencyChangedData = {
  agent_type: string;
  dependency: Dependency;
  node: string;
  state: DependencyState;
  providers: string[];
  revision: number;
};
/**
 * v1.2: about the stored spec of `agent_type` in the approval gate: the state it is now in, and
 * who decided and why as the operator's request said (null for a pending spec, and a reason
 * left out).
 */
export type ApprovalData = {
  agent_type: string;
  version: string;
  tenant_scope: string | null;
  state: "pending" | "approved" | "rejected";
  by: string | null;
  reason: string | null;
  revision: number;
};
/** v1.2: a stored spec's trust state: verified, unverified, or withheld (not verified under `require`, so not routed). */
export type TrustStateName = "verified" | "unverified" | "withheld";
/**
 * v1.2: the stored spec of `agent_type` changed trust state without a new spec (docs/trust.md,
 * "When trust roots change"): `kid` and `publisher` of the attestation now held (or of the one
 * that lapsed), `reason` why (a refusal reason such as `unknown_key` or `key_expired`,
 * `verified` when it verifies again, `mode_off`, or `registered` for a registration of the same spec).
 */
export type TrustChangedData = {
  agent_type: string;
  version: string;
  tenant_scope: string | null;
  previous_state: TrustStateName;
  state: TrustStateName;
  kid: string | null;
  publisher: string | null;
  reason: string;
  revision: number;
};
/**
 * v1.2: the trust roots the bucket holds for `tenant` were set (or replaced) or deleted: the
 * entry's mode, approval policy and key ids as now stored (null and empty once deleted), who the
 * operator's request named, and the revision of the write. A tenant the trust file names keeps
 * the file's roots whatever the bucket holds (docs/trust.md).
 */
export type TrustRootsChangedData = {
  tenant: string;
  change: "set" | "deleted";
  mode: "off" | "verify-if-present" | "require" | null;
  approval: "auto" | "manual" | null;
  kids: string[];
  by: string | null;
  revision: number;
};
/**
 * v1.2: an operator deprecated the agent type (`deprecated: true`, with `reason` and the
 * `successor` type to use instead, each null when not given) or withdrew its deprecation
 * (`deprecated: false`, `reason` the operator's why, if given). `version` is the stored spec's.
 */
export type DeprecationData = {
  agent_type: string;
  version: string;
  tenant_scope: string | null;
  deprecated: boolean;
  by: string;
  reason: string | null;
  successor: string | null;
  revision: number;
};
export type SelfPreservationData = { active: boolean; overdue: number; live: number; ratio: number; threshold: number };
/** The stream sequences `first_seq`..`last_seq` (inclusive) were never mirrored; `stream` names the stream. */
export type AuditGapData = { stream: string; first_seq: number; last_seq: number; missing: number };

/** The data each event type carries. */
export type EventData = {
  "registry.agent.registered": RegisteredData;
  "registry.agent.deregistered": DeregisteredData;
  "registry.agent.status_changed": StatusChangedData;
  "registry.capability.changed": CapabilityChangedData;
  "registry.agent.dependency_lost": DependencyChangedData;
  "registry.agent.dependency_restored": DependencyChangedData;
  "registry.agent.pending": ApprovalData;
  "registry.agent.approved": ApprovalData;
  "registry.agent.rejected": ApprovalData;
  "registry.agent.trust_changed": TrustChangedData;
  "registry.trust.roots_changed": TrustRootsChangedData;
  "registry.agent.deprecated": DeprecationData;
  "registry.agent.undeprecated": DeprecationData;
  "registry.agent.heartbeat": HeartbeatData;
  "registry.alert.self_preservation": SelfPreservationData;
  "registry.alert.audit_gap": AuditGapData;
};

export const CLOUD_EVENT_SOURCE = "agent-registry";

export type CloudEvent<T extends string = string, D = unknown> = {
  specversion: "1.0";
  id: string;
  source: typeof CLOUD_EVENT_SOURCE;
  type: T;
  time: string;
  /** The agent_type or the capability the event is about. */
  subject: string;
  datacontenttype: "application/json";
  data: D;
  /**
   * v1.2, regional mode only: the home region of the replica that stored the event (a CloudEvents
   * extension attribute). Ids are store revisions, unique within a region, so across regions an
   * event is known by its region and id together (`eventKey`).
   */
  region?: string;
};

/**
 * What tells one stored event from every other, across regions too: the id, qualified by the
 * region when the event has one. Each region's revisions start at 1, so two regions store events
 * with the same id; their stream messages carry this as Nats-Msg-Id, because a stream that sources
 * both (a region's global stream) must not see one id from two sources (depending on the
 * nats-server version it holds the second back for its duplicate window or deduplicates it), and
 * the audit mirror keeps one row per key.
 */
export function eventKey(e: { id: string; region?: string | undefined }): string {
  return e.region === undefined ? e.id : `${e.region}.${e.id}`;
}

export type AgentRegisteredEvent = CloudEvent<"registry.agent.registered", RegisteredData>;
export type AgentDeregisteredEvent = CloudEvent<"registry.agent.deregistered", DeregisteredData>;
export type AgentStatusChangedEvent = CloudEvent<"registry.agent.status_changed", StatusChangedData>;
export type CapabilityChangedEvent = CloudEvent<"registry.capability.changed", CapabilityChangedData>;
export type DependencyLostEvent = CloudEvent<"registry.agent.dependency_lost", DependencyChangedData>;
export type DependencyRestoredEvent = CloudEvent<"registry.agent.dependency_restored", DependencyChangedData>;
export type AgentPendingEvent = CloudEvent<"registry.agent.pending", ApprovalData>;
export type AgentApprovedEvent = CloudEvent<"registry.agent.approved", ApprovalData>;
export type AgentRejectedEvent = CloudEvent<"registry.agent.rejected", ApprovalData>;
export type AgentTrustChangedEvent = CloudEvent<"registry.agent.trust_changed", TrustChangedData>;
export type TrustRootsChangedEvent = CloudEvent<"registry.trust.roots_changed", TrustRootsChangedData>;
export type AgentDeprecatedEvent = CloudEvent<"registry.agent.deprecated", DeprecationData>;
export type AgentUndeprecatedEvent = CloudEvent<"registry.agent.undeprecated", DeprecationData>;
export type AgentHeartbeatEvent = CloudEvent<"registry.agent.heartbeat", HeartbeatData>;
export type SelfPreservationAlertEvent = CloudEvent<"registry.alert.self_preservation", SelfPreservationData>;
export type AuditGapAlertEvent = CloudEvent<"registry.alert.audit_gap", AuditGapData>;

/** Any event a consumer of `registry.>` can receive, discriminated by `type`. */
export type RegistryEvent = { [T in EventType]: CloudEvent<T, EventData[T]> }[EventType];

export function toCloudEvent<T extends string, D>(type: T, id: string, subject: string, data: D, time: number): CloudEvent<T, D> {
  return {
    specversion: "1.0",
    id,
    source: CLOUD_EVENT_SOURCE,
    type,
    time: isoTime(time),
    subject,
    datacontenttype: "application/json",
    data,
  };
}

/**
 * The JSON text of a heartbeat event, exactly `JSON.stringify(toCloudEvent(...))` with
 * `toCloudEvent(EventType.AgentHeartbeat, id, data.agent_type, data, time)`, written directly:
 * one goes out per heartbeat (core NATS), and building the two objects and walking them was
 * the largest part of a heartbeat answered from memory after the socket (issue 20's profile).
 * Strings still go through JSON.stringify, so any text is escaped as it would be.
 */
export function heartbeatEventJson(id: string, data: HeartbeatData, time: number): string {
  const agentType = JSON.stringify(data.agent_type);
  return (
    `{"specversion":"1.0","id":${JSON.stringify(id)},"source":"${CLOUD_EVENT_SOURCE}","type":"${EventType.AgentHeartbeat}",` +
    `"time":"${isoTime(time)}","subject":${agentType},"datacontenttype":"application/json",` +
    `"data":{"agent_type":${agentType},"instance_id":${JSON.stringify(data.instance_id)},"status":${JSON.stringify(data.status)},` +
    `"active_tasks":${data.active_tasks === null ? "null" : JSON.stringify(data.active_tasks)}}}`
  );
}
