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
  last_heartbeat: string | null;
  tenant_scope: string | null;
  owner_team: string;
};

export type FleetPage = { agents: FleetRow[]; next_cursor: string | null; revision: number };
export type SearchPage = { results: Array<{ agent_type: string; capability: string; score: number }>; agents: FleetRow[]; revision: number };
export type UiInfo = { version: string; prefix: string; missed_heartbeats: number; heartbeat_events: boolean; now: string };
export type HistoryReply =
  | { available: true; events: Array<Record<string, unknown>>; next_cursor: string | null }
  | { available: false; reason: string };

/** An agent type's neighbours in the dependency graph, one step each way. */
export type GraphNeighbour = { name: string; kind: string; version: string; state: string };
export type NeighboursReply = {
  dependencies: GraphNeighbour[];
  dependents: GraphNeighbour[];
  problems: Array<{ severity: string; code: string; message: string; path: string }>;
};
