/**
 * Request and reply shapes of PROTOCOL.md section 2, as the SDK sees them on the wire
 * (snake_case, times as ISO 8601 strings). The AgentSpec itself comes from the domain so the
 * SDK and the service cannot disagree about it.
 */
import type { AgentSpec, AgentSpecInput } from "../domain/spec.js";
import type { AgentView, InstanceView } from "../domain/agent-view.js";
import type { CapabilityChangedData, DeregisteredData, RegisteredData, SelfPreservationData, StatusChangedData } from "../domain/events.js";
import type { RegisterReply } from "../service/registrar.js";

// The shapes the service itself builds are imported, not restated, so they cannot drift.
export type { AgentSpec, AgentSpecInput, AgentView, InstanceView, RegisterReply };

export type InstanceStatus = "registered" | "ready" | "draining";
export type AgentStatus = InstanceStatus | "deregistered";
export type JsonSchema = Record<string, unknown> | boolean;

/** Options every query accepts. */
export type QueryOptions = {
  /** Wait (up to 2 s, server side) until the replica has applied this store revision. */
  minRevision?: number;
  /** Overrides the client's request timeout for this call. */
  timeoutMs?: number;
};

// ---- writes ----

export type RegisterRequest = {
  spec: AgentSpecInput;
  instance_id?: string;
  heartbeat_interval_ms?: number;
  status?: "registered" | "ready";
  metadata?: Record<string, string>;
};

export type HeartbeatRequest = { status?: InstanceStatus; active_tasks?: number };
export type HeartbeatReply = { status: InstanceStatus; revision: number };

export type DeregisterRequest = { reason?: string };
export type DeregisterReply = {
  agent_type: string;
  instance_id: string;
  agent_removed: boolean;
  revision: number;
};
/** PROTOCOL.md says "the same, for every instance": no single instance_id, the removed ones listed. */
export type DeregisterTypeReply = Omit<DeregisterReply, "instance_id"> & { instance_id: null; instances?: string[] };

// ---- views ----

// ---- queries ----

export type LookupRequest = { capability: string; status?: AgentStatus[]; version?: string };
export type Provider = {
  agent_type: string;
  version: string;
  nats_subject: string;
  consumer_group: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  confidence_hint?: number | null;
  status: AgentStatus;
  ready_instances: number;
  tenant_scope: string | null;
};
export type LookupReply = { capability: string; providers: Provider[]; revision: number };

export type GetReply = { agent: AgentView; revision: number };

export type ListRequest = {
  status?: AgentStatus[];
  owner_team?: string;
  tags?: Record<string, string>;
  capability?: string;
  limit?: number;
  cursor?: string;
};
export type ListReply = { agents: AgentView[]; next_cursor: string | null; revision: number };

export type CapabilitiesRequest = { status?: AgentStatus[] };
export type CapabilityEntry = {
  name: string;
  description: string;
  providers: string[];
  input_schema: JsonSchema;
  output_schema: JsonSchema;
};
export type CapabilitiesReply = { capabilities: CapabilityEntry[]; revision: number };

export type RouteRequest = { skill?: string; tags?: string[]; preferred_runtime?: string };
export type RouteReply = {
  agent_type: string;
  nats_subject: string;
  consumer_group: string;
  version: string;
  runtime: string | null;
  score: number;
  candidates: { agent_type: string; score: number }[];
  revision: number;
};

export type FindRequest = { skill: string } | { tag: string } | { name: string };
export type FindReply = { agents: AgentView[]; revision: number };

export type SearchRequest = { query: string; limit?: number };
export type SearchResult = { agent_type: string; capability: string; score: number };
export type SearchReply = { results: SearchResult[]; revision: number };

export type DiscoverRequest = { capability?: string };
export type DiscoveredAgent = {
  id: string;
  capabilities: string[];
  status: "ready" | "busy" | "unavailable";
  providers?: NonNullable<AgentSpec["providers"]>;
};
export type DiscoverReply = { agents: DiscoveredAgent[]; revision: number };

// ---- events (PROTOCOL.md section 5) ----

type CloudEvent<T extends string, D> = {
  specversion: "1.0";
  id: string;
  source: string;
  type: T;
  time: string;
  subject: string;
  datacontenttype: "application/json";
  data: D;
};

export type AgentRegisteredEvent = CloudEvent<"registry.agent.registered", RegisteredData>;
export type AgentDeregisteredEvent = CloudEvent<"registry.agent.deregistered", DeregisteredData>;
export type AgentStatusChangedEvent = CloudEvent<"registry.agent.status_changed", StatusChangedData>;
export type CapabilityChangedEvent = CloudEvent<"registry.capability.changed", CapabilityChangedData>;
/** Core NATS only, never stored; `active_tasks` is null when the heartbeat did not report it. */
export type AgentHeartbeatEvent = CloudEvent<
  "registry.agent.heartbeat",
  { agent_type: string; instance_id: string; status: InstanceStatus; active_tasks: number | null }
>;
/** An extension of PROTOCOL.md section 5 (docs/protocol.md, section 8). */
export type SelfPreservationAlertEvent = CloudEvent<"registry.alert.self_preservation", SelfPreservationData>;

export type RegistryEvent =
  | AgentRegisteredEvent
  | AgentDeregisteredEvent
  | AgentStatusChangedEvent
  | CapabilityChangedEvent
  | AgentHeartbeatEvent
  | SelfPreservationAlertEvent;
