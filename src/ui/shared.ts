/**
 * The shapes of /ui/api replies that are the page's own (not the registry's): shared by the
 * server (src/ui/server) and the browser code (src/ui/web), types only.
 */

/** One row of the fleet table: what the page shows of an AgentView. */
export type FleetRow = {
  agent_type: string;
  display_name: string | null;
  description: string;
  status: string;
  kind: string;
  version: string;
  /** Ready instances among those the reply carries (one page of them for a very large type). */
  ready: number;
  instances: number;
  /** For a deregistered type, the last heartbeat of its last instance (from its last removal event), or null when unknown. */
  last_heartbeat: string | null;
  tenant_scope: string | null;
  owner_team: string;
  /**
   * Why the stored spec is not routable: the approval gate's "pending" or "rejected", or
   * "withheld" (no longer verified under its tenant's `require`, docs/trust.md); null when it is routable.
   */
  approval: string | null;
  /** v1.2: the operator's deprecation (docs/trust.md, "Deprecation"), in words ("by alice: why; use X"); null when not deprecated. Still routed. */
  deprecated: string | null;
};

export type FleetPage = { agents: FleetRow[]; next_cursor: string | null; revision: number };
export type SearchPage = { results: Array<{ agent_type: string; capability: string; score: number }>; agents: FleetRow[]; revision: number };
export type UiInfo = { version: string; prefix: string; missed_heartbeats: number; heartbeat_events: boolean; now: string };
export type HistoryReply =
  | { available: true; events: Array<Record<string, unknown>>; next_cursor: string | null }
  | { available: false; reason: string };

/** `/ui/api/rates?range=`: registrations, deregistrations and evictions per bucket, from the audit mirror's `history_rates`. */
export type RatesReply =
  | { available: true; range: string; since: string; until: string; bucket_seconds: number; buckets: Array<{ start: string; registered: number; deregistered: number; evicted: number }> }
  | { available: false; reason: string };

/** An agent type's neighbours in the dependency graph, one step each way. */
export type GraphNeighbour = { name: string; kind: string; version: string; state: string };
export type NeighboursReply = {
  dependencies: GraphNeighbour[];
  dependents: GraphNeighbour[];
  problems: Array<{ severity: string; code: string; message: string; path: string }>;
};

/** Where an instance stands against its heartbeats: late has missed one, critical two (docs/ui.md). */
export type Liveness = "on_time" | "late" | "critical";

/**
 * The fleet at a glance (/ui/api/summary), counted by the replica that answers. Each part is
 * null when it cannot be known now (the events stream unreadable, no replica answering a ping).
 */
export type FleetSummary = {
  /** Live instances by status, and among them those late and critical (static entries never are). */
  instances: { total: number; by_status: Record<string, number>; late: number; critical: number };
  /** Agent types by status (deregistered ones kept for the retention period included). */
  agent_types: Record<string, number>;
  /** Specs the approval gate holds, every tenant's (docs/trust.md): waiting for an operator, and rejected. */
  approvals: { pending: number; rejected: number; withheld: number };
  /** The last self-preservation alert: whether evictions are paused now, since when. */
  self_preservation: { active: boolean; since: string; overdue: number; live: number } | null;
  /** The replica that holds the evictor lease, by its name (REGISTRY_REPLICA_NAME). */
  evictor: string | null;
  /** The registry replicas that answer a $SRV ping under this prefix. */
  replicas: Array<{ id: string; version: string }> | null;
  nats_server: string | null;
  missed_heartbeats: number;
  now: string;
  /** The store revision the counts are of (when the counting started); null when unknown. */
  revision: number | null;
};

/** The dependency graph the page draws (/ui/api/graph): around `root`, or the whole fleet (or tenant) when it is null. */
export type PageGraph = {
  root: string | null;
  tenant: string | null;
  nodes: Array<{ id: string; kind: string; name: string; version: string; state: string }>;
  edges: Array<{ from: string; to: string; capability: string | null }>;
  problems: Array<{ severity: string; code: string; message: string; path: string }>;
  revision: number;
};

/** One spec in the approval gate as the approvals view shows it (/ui/api/approvals). */
export type ApprovalRow = {
  agent_type: string;
  display_name: string | null;
  description: string;
  version: string;
  tenant_scope: string | null;
  owner_team: string;
  /** When the agent type was first registered (the spec may have changed since). */
  registered_at: string;
  /** Instances stored against the spec, waiting to be routed; ready ones among those the reply carries. */
  instances: number;
  ready: number;
  /** The spec record's revision: what `agent-registry approve --revision` names, so a spec replaced since is never approved unseen. */
  revision: number;
  /** Whether the spec's signature was verified (docs/trust.md), and by whose key. */
  verified_by: string | null;
  approval: { state: string; by: string | null; at: string | null; reason: string | null };
  /** Withheld by trust (listed with `state=withheld`): why its signatures no longer verify, with which key, since when; null otherwise. */
  withheld: { reason: string; kid: string | null; at: string } | null;
  /** The operator's deprecation in words, as FleetRow's; null when not deprecated. */
  deprecated: string | null;
};

/** `/ui/api/approvals?state=pending|rejected|withheld`: one page of the registry's `registry.approval.pending`. */
export type ApprovalsPage = { state: "pending" | "rejected" | "withheld"; agents: ApprovalRow[]; next_cursor: string | null; revision: number };

/** An operator's deprecation as the page's rows say it: "by alice: why; use X". */
export function deprecationText(d: { by: string; reason?: string; successor?: string } | undefined): string | null {
  return d === undefined ? null : `by ${d.by}${d.reason === undefined ? "" : `: ${d.reason}`}${d.successor === undefined ? "" : `; use ${d.successor}`}`;
}

/** Why a spec is not routable, as FleetRow's `approval` says it; null when it is. */
export function holdOf(a: { approval?: { state: string }; trust?: { verified: boolean; lapse?: { state: string } } }): string | null {
  if (a.approval !== undefined && a.approval.state !== "approved") return a.approval.state;
  return a.trust !== undefined && !a.trust.verified && a.trust.lapse?.state === "withheld" ? "withheld" : null;
}
