/**
 * Request and reply bodies of PROTOCOL.md section 2, as they travel (snake_case, times as
 * ISO 8601 strings). The service builds its replies with these types and the SDK reads them,
 * so the two cannot disagree.
 */
import type { AgentKind, AgentSpec, AgentSpecInput, Capability, JsonSchema, ModelProvider, ToolAnnotations } from "./spec.js";
import type { AgentStatus, ApprovalState, InstanceStatus } from "./states.js";
import type { ErrorIssue } from "./errors.js";
import type { CloudEvent, DependencyState } from "./events.js";

/** Every query reply carries the store revision it reflects. */
export type Revisioned = { revision: number };

// ---- writes ----

/**
 * An agent registering with the A2A Agent Card it already publishes (PROTOCOL.md section 10.1):
 * the registry builds the spec from the card and keeps the card for export. `agent_type` is
 * the subject's; sent in the body, it must match.
 */
export type CardRegistration = {
  agent_type: string;
  a2a_card: Record<string, unknown>;
  /** Refuse any deviation from the card's A2A schema (`invalid_card`) instead of warning. */
  strict?: boolean;
  nats_subject?: string;
  consumer_group?: string;
  owner_team?: string;
  tenant_scope?: string | null;
};

/** An MCP server registering its `tools/list` result (PROTOCOL.md section 10.2): each tool becomes a capability. */
export type ToolspecRegistration = {
  agent_type: string;
  mcp_toolspec: { tools: Array<Record<string, unknown>>; [key: string]: unknown };
  kind?: "mcp_server" | "tool";
  description: string;
  version: string;
  owner_team?: string;
  url?: string;
  nats_subject?: string;
  consumer_group?: string;
  tenant_scope?: string | null;
};

/**
 * v1.2: an MCP server registering the `server.json` it publishes to the MCP Registry
 * (docs/protocol.md section 8): description, version, title and remote URL come from it, its
 * tools from `mcp_toolspec` or from its
 * `_meta["io.modelcontextprotocol.registry/publisher-provided"].tools`.
 */
export type ServerJsonRegistration = {
  agent_type: string;
  mcp_server: Record<string, unknown>;
  mcp_toolspec?: { tools: Array<Record<string, unknown>>; [key: string]: unknown };
  kind?: "mcp_server" | "tool";
  owner_team?: string;
  nats_subject?: string;
  consumer_group?: string;
  tenant_scope?: string | null;
};

/** What a registration carries as its spec: an AgentSpec, an A2A card, an MCP tool spec or a server.json. */
export type SpecRegistration = { spec: AgentSpecInput };
export type RegistrationSource = SpecRegistration | CardRegistration | ToolspecRegistration | ServerJsonRegistration;

export type RegisterRequest = RegistrationSource & {
  instance_id?: string;
  heartbeat_interval_ms?: number;
  status?: "registered" | "ready";
  metadata?: Record<string, string>;
  /**
   * Overwrite the stored spec of this version when it differs (PROTOCOL.md section 9); without
   * it such a registration is refused with `conflict`. Logged, and the stored event says
   * `replaced: true`.
   */
  replace?: boolean;
};
export type RegisterReply = {
  agent_type: string;
  version: string;
  instance_id: string;
  status: InstanceStatus;
  revision: number;
  heartbeat_subject: string;
  heartbeat_interval_ms: number;
  evict_after_ms: number;
  warnings: string[];
  /** The A2A version a card was read as (a registration with `a2a_card`). */
  a2a_version?: "0.3" | "1.0";
  /** v1.2: the stored spec's approval under policy manual (docs/trust.md); absent under auto. */
  approval?: ApprovalView;
};

export type HeartbeatRequest = { status?: InstanceStatus; active_tasks?: number };
/**
 * `last_heartbeat` (an addition, docs/protocol.md section 8): the answering replica's stamp of
 * this heartbeat. Under memory liveness the stored record no longer carries it.
 */
export type HeartbeatReply = { status: InstanceStatus; revision: number; last_heartbeat?: string };

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

export type InstanceView = {
  instance_id: string;
  version: string;
  status: InstanceStatus;
  registered_at: string;
  last_heartbeat: string;
  heartbeat_interval_ms: number;
  active_tasks: number;
  metadata: Record<string, string>;
};

/**
 * A capability as the registry's replies show it: as stored, plus `effective_annotations`
 * (v1.2, PROTOCOL.md section 10.2), its `annotations` with MCP's defaults for the hints left
 * out (`destructiveHint` and `idempotentHint` only when `readOnlyHint` is not true): what an
 * MCP client assumes of the tool `toolspec` exports, which carries the annotations as given.
 * Absent from the replies of a registry before v1.2.
 */
export type CapabilityView = Capability & { effective_annotations?: ToolAnnotations };

/**
 * The stored AgentSpec plus what the registry tracks about the agent type. `instances` may be
 * one page of `instance_count` (ordered by instance_id) when they would not fit in one reply:
 * `instances_next_cursor` is then where `get` with `instances_cursor` goes on.
 */
export type AgentView = Omit<AgentSpec, "capabilities"> & {
  capabilities: CapabilityView[];
  status: AgentStatus;
  registered_at: string;
  /**
   * v1.2: when the stored spec record last changed (its spec, its verification, its kind of
   * entry, or an approval decision); `registered_at` for a spec never changed. Absent from the
   * replies of a registry before v1.2.
   */
  updated_at?: string;
  last_heartbeat: string | null;
  deregistered_at: string | null;
  revision: number;
  instance_count: number;
  instances: InstanceView[];
  instances_next_cursor: string | null;
  /** v1.2: how the stored spec was verified (docs/trust.md). */
  trust: TrustView;
  /**
   * v1.2: where the stored spec stands in its tenant's approval gate (docs/trust.md, "The
   * approval gate"); absent: approved by policy `auto`, as every spec before v1.2.
   */
  approval?: ApprovalView;
  /** v1.2: the agent type is deprecated by an operator (docs/trust.md, "Deprecation"): still routed; absent when it is not. */
  deprecated?: DeprecationView;
};

/**
 * v1.2: an operator's deprecation of an agent type as replies show it (docs/trust.md,
 * "Deprecation"): who, when, why, and the agent type to use instead, when they said.
 */
export type DeprecationView = { by: string; at: string; reason?: string; successor?: string };

/** v1.2: an approval as replies show it; `by`, `at` and `reason` once an operator decided. */
export type ApprovalView = { state: ApprovalState; by?: string; at?: string; reason?: string };

/**
 * v1.2: a stored spec's verification; `verified: false` for one stored without (trust off, or
 * unsigned under verify-if-present), with `lapse` once a re-judgement after the trust roots
 * changed found it no longer verified (`withheld`: not routed, under `require`).
 */
export type TrustView =
  | { verified: false; lapse?: { state: "unverified" | "withheld"; reason: string; kid: string | null; at: string } }
  | { verified: true; kid: string; publisher: string; verified_at: string };

// ---- queries ----

/** Every query body may carry `min_revision` (PROTOCOL.md section 2). */
export type QueryBody = { min_revision?: number };

/** Paging of any list a reply carries: at most `limit` items, then `next_cursor` (null at the end). */
export type PageRequest = { limit?: number; cursor?: string };
/** The most `limit` any paged query accepts. */
export const MAX_PAGE_LIMIT = 10_000;
/** v1.2: the most agent types one `list` may name in `agent_types`. */
export const MAX_LIST_AGENT_TYPES = 100;

/**
 * `kind` keeps the entries of that kind only; `read_only: true` keeps the capabilities whose
 * `annotations.readOnlyHint` is true (PROTOCOL.md section 10.2; docs/protocol.md section 8).
 */
export type EntryFilters = { kind?: AgentKind };
export type ToolFilters = EntryFilters & { read_only?: boolean };

/** Regional mode (v1.2, docs/operations.md "Running regions"): which regions' providers a query lists. */
export const QUERY_SCOPES = ["local", "global", "prefer_local"] as const;
export type QueryScope = (typeof QUERY_SCOPES)[number];
/** `scope` (default `prefer_local`: the asking region's first); outside regional mode every scope is the one region. */
export type RegionScope = { scope?: QueryScope };
/** In regional mode each entry names its region, and `stale: true` while that region's mirror has gone quiet. */
export type RegionMark = { region?: string; stale?: true };

export type LookupRequest = { capability: string; status?: AgentStatus[]; version?: string; verified_only?: boolean } & ToolFilters & PageRequest & RegionScope;
export type Provider = {
  agent_type: string;
  kind: AgentKind;
  version: string;
  nats_subject: string;
  consumer_group: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  confidence_hint?: number | null;
  /** v1.2: the capability's annotations with MCP's defaults that apply (CapabilityView). */
  effective_annotations?: ToolAnnotations;
  status: AgentStatus;
  ready_instances: number;
  tenant_scope: string | null;
  /** v1.2: whether the stored spec was verified against its tenant's trust roots. */
  verified?: boolean;
  /** v1.2: present when an operator deprecated the provider's agent type (it is still a provider). */
  deprecated?: DeprecationView;
};
export type LookupReply = { capability: string; providers: Array<Provider & RegionMark>; next_cursor: string | null; revision: number };

/** `instances_limit`/`instances_cursor` page the agent's instances (ordered by instance_id). */
export type GetRequest = { agent_type: string; instances_limit?: number; instances_cursor?: string };
export type GetReply = { agent: AgentView; revision: number };

export type ListRequest = {
  status?: AgentStatus[];
  owner_team?: string;
  tags?: Record<string, string>;
  capability?: string;
  /** v1.2: these agent types only, at most MAX_LIST_AGENT_TYPES (a batch of `get`s); unknown ones are left out. */
  agent_types?: string[];
  /** v1.2: at most this many instances in each agent's view. */
  instances_limit?: number;
  limit?: number;
  cursor?: string;
} & EntryFilters;
export type ListReply = { agents: AgentView[]; next_cursor: string | null; revision: number };
/** v1.2: `registry.approval.approve.<agent_type>` and `.reject.<agent_type>` (operators only, docs/trust.md). */
export type ApproveRequest = { by: string; version?: string; revision?: number; reason?: string };
export type RejectRequest = { by: string; version?: string; revision?: number; reason: string };
/** The stored spec's approval once the decision is written. */
export type ApprovalReply = { agent_type: string; version: string; tenant_scope: string | null; approval: ApprovalView; revision: number };
/** v1.2: `registry.approval.pending`: specs waiting for a decision (or rejected), all tenants unless `tenant` names one (null: shared agents). */
/** `state: "withheld"` (v1.2): the specs whose signatures no longer verify under their tenant's `require` (not routed, docs/trust.md). */
export type PendingRequest = QueryBody & { tenant?: string | null; state?: "pending" | "rejected" | "withheld"; limit?: number; cursor?: string | null };
export type PendingReply = { agents: AgentView[]; next_cursor: string | null; revision: number };
/** v1.2: `registry.approval.deprecate.<agent_type>` (operators only, docs/trust.md "Deprecation"). */
export type DeprecateRequest = { by: string; version?: string; revision?: number; reason?: string; successor?: string };
/** v1.2: `registry.approval.undeprecate.<agent_type>`: withdraws the deprecation. */
export type UndeprecateRequest = { by: string; version?: string; revision?: number; reason?: string };
/** The agent type's deprecation once the decision is written: null after `undeprecate`. */
export type DeprecationReply = { agent_type: string; version: string; tenant_scope: string | null; deprecated: DeprecationView | null; revision: number };

/**
 * v1.2: `registry.trust.set.<tenant>` (operators only, docs/trust.md "Trust roots in the bucket"):
 * the tenant's entry as the trust file writes one (mode, approval, inline `jwks`, signers; no
 * `jwks_file` nor `jwks_url`), who sets it, and the revision of the stored entry it replaces (0:
 * none), so two operators never overwrite each other unseen.
 */
export type TrustSetRequest = { trust: TenantTrustEntry; by?: string; revision?: number };
export type TrustDeleteRequest = { by?: string; revision?: number };
/** A tenant's entry as the trust file and the bucket write it. */
export type TenantTrustEntry = {
  mode?: "off" | "verify-if-present" | "require";
  approval?: "auto" | "manual";
  jwks?: { keys: Array<Record<string, unknown>> };
  signers?: Array<{ kid: string; publisher: string; agent_types: string[]; not_before?: string; not_after?: string }>;
};
/**
 * The reply of the three trust ops: the entry the bucket holds for the tenant (null: none, or
 * deleted) at `revision` (null: none), and where the tenant's roots in force come from on the
 * replica that answered (`file` wins over the bucket for a tenant the trust file names).
 */
export type TrustRootsReply = {
  tenant: string;
  trust: TenantTrustEntry | null;
  by: string | null;
  revision: number | null;
  in_force: "file" | "bucket" | "none";
};

/** `schemas: false` leaves the input and output schemas out (a much smaller projection). */
export type CapabilitiesRequest = { status?: AgentStatus[]; schemas?: boolean } & PageRequest;
export type CapabilityEntry = {
  name: string;
  description: string;
  providers: string[];
  /** Absent when the request asked for `schemas: false`. */
  input_schema?: JsonSchema;
  output_schema?: JsonSchema;
};
export type CapabilitiesReply = { capabilities: CapabilityEntry[]; next_cursor: string | null; revision: number };

export type RouteRequest = { skill?: string; tags?: string[]; preferred_runtime?: string; verified_only?: boolean } & RegionScope;
export type RouteReply = RegionMark & {
  agent_type: string;
  nats_subject: string;
  consumer_group: string;
  version: string;
  runtime: string | null;
  score: number;
  candidates: { agent_type: string; score: number; deprecated?: DeprecationView }[];
  revision: number;
  /** v1.2: present when the chosen agent type is deprecated (still routed; `successor` says what to move to). */
  deprecated?: DeprecationView;
};

export type FindRequest = ({ skill: string } | { tag: string } | { name: string }) & { verified_only?: boolean } & PageRequest & RegionScope;
export type FindReply = { agents: Array<AgentView & RegionMark>; next_cursor: string | null; revision: number };

export type SearchRequest = { query: string; limit?: number; verified_only?: boolean } & ToolFilters & RegionScope;
/** `deprecated` (v1.2): present when an operator deprecated the agent type. */
export type SearchResult = { agent_type: string; capability: string; score: number; deprecated?: DeprecationView } & RegionMark;
export type SearchReply = { results: SearchResult[]; revision: number };

export type DiscoverRequest = { capability?: string; verified_only?: boolean } & EntryFilters & PageRequest & RegionScope;
export type DiscoveredAgent = RegionMark & {
  id: string;
  capabilities: string[];
  status: "ready" | "busy" | "unavailable";
  providers?: ModelProvider[];
  /** v1.2: present when an operator deprecated the agent type. */
  deprecated?: DeprecationView;
};
export type DiscoverReply = { agents: DiscoveredAgent[]; next_cursor: string | null; revision: number };

// ---- exports (PROTOCOL.md section 10.3) ----

export type A2aVersion = "1.0" | "0.3";
/** An A2A Agent Card, as JSON: the registry's exports validate strictly against their version's schema. */
export type AgentCard = Record<string, unknown>;
export type CardRequest = { agent_type: string; a2a_version?: A2aVersion };
export type CardReply = { card: AgentCard; revision: number };

/** An MCP tool as `tools/list` lists it (name, title, description, inputSchema, outputSchema, annotations, and kept keys such as `_meta`). */
export type McpToolDescription = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
};
export type ToolspecRequest = { agent_type: string };
export type ToolspecReply = { tools: McpToolDescription[]; revision: number };

/** Which of a capability's schemas a payload is checked against (PROTOCOL.md section 11.4). */
export type PayloadDirection = "input" | "output";
/** A payload to check against a capability's schema; an A2A message (`{"parts": [...]}`) is checked through its first data part. */
export type CheckRequest = { capability: string; agent_type?: string; direction?: PayloadDirection; payload: unknown };
/** `errors` is empty when `valid`; each names the place in the payload (`payload.items.0.id`). */
export type CheckReply = { valid: boolean; errors: ErrorIssue[]; agent_type: string; version: string; revision: number };

/** An agent type's dependencies or dependents, or the whole fleet's graph (PROTOCOL.md section 11.2). */
export type GraphRequest = { agent_type?: string; direction?: "dependencies" | "dependents"; depth?: number };
export type GraphNode = { id: string; kind: string; name: string; version: string; state: DependencyState };
/** Always from the one that depends to what it depends on. */
export type GraphEdge = { from: string; to: string; capability: string | null };
/** Codes: `missing`, `version_mismatch` (warnings), `cycle` (an error), `truncated` (a warning: the graph was cut to fit a reply). */
export type GraphProblem = { severity: "error" | "warning"; code: string; message: string; path: string };
export type GraphReply = { nodes: GraphNode[]; edges: GraphEdge[]; problems: GraphProblem[]; revision: number };

export type SbomFormat = "cyclonedx" | "spdx";
/** The fleet's SBOM, or that of one agent and everything it depends on (PROTOCOL.md section 11.2). */
export type SbomRequest = { format?: SbomFormat; agent_type?: string };
/** The document itself (a CycloneDX 1.6 BOM or an SPDX 2.3 document), with no other field. */
export type SbomReply = Record<string, unknown>;
// ---- versioned schemas (PROTOCOL.md section 11.1) ----

/** The body of `registry.schema.put.<name>`; the name is the subject's. */
export type SchemaPutRequest = { version: string; schema: JsonSchema; description?: string };
/** `created: false` when the same content was stored already (an idempotent put). */
export type SchemaPutReply = { name: string; version: string; created: boolean; revision: number };
export type SchemasRequest = { name?: string } & PageRequest;
export type SchemaSummary = { name: string; version: string; description: string };
export type SchemasReply = { schemas: SchemaSummary[]; next_cursor: string | null; revision: number };
export type SchemaRequest = { name: string; version: string };
/**
 * `used_by`: the agent types (visible to the asker) whose stored spec refers to this schema
 * directly, sorted; cut to what fits one reply, while `used_by_count` counts them all.
 */
export type SchemaReply = { name: string; version: string; schema: JsonSchema; description: string; used_by: string[]; used_by_count: number; revision: number };

/**
 * `history` (PROTOCOL.md section 12), answered by the audit mirror from PostgreSQL:
 * `since` inclusive, `until` exclusive, oldest first.
 */
export type HistoryRequest = {
  agent_type?: string;
  capability?: string;
  types?: string[];
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
};
/** A stored event as the mirror returns it: the CloudEvent plus its stream sequence. */
export type HistoryEvent = CloudEvent & { seq: number; data_omitted?: true };
export type HistoryReply = { events: HistoryEvent[]; next_cursor: string | null; mirrored_seq: number; stream_last_seq: number };
/** v1.2: `history_rates` (served by the audit mirror): counts per bucket of time; only buckets with events, in time order. */
export type HistoryRatesRequest = { since: string; until?: string; bucket_seconds: number };
/** A bucket of `bucket_seconds` from `start`: registered events, deregistered events, and those of them whose reason is `evicted`. */
export type RateBucket = { start: string; registered: number; deregistered: number; evicted: number };
export type HistoryRatesReply = { since: string; until: string; bucket_seconds: number; buckets: RateBucket[]; mirrored_seq: number; stream_last_seq: number };
