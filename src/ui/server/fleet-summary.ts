/**
 * /ui/api/summary: the fleet at a glance (shared.ts FleetSummary). Counts come from this
 * replica's view through a read-only port the composition root wires; whether eviction is paused
 * from the last self-preservation alert in the events stream (the evicting replica publishes it,
 * so any replica reads the same answer); the replicas from a `$SRV` ping. One summary is
 * computed at a time and reused for MIN_AGE_MS, so open pages cost one pass a second at most,
 * and the pass gives the event loop back every PACE instances.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { Svcm } from "@nats-io/services";
import { SERVICE_NAME } from "../../protocol/subjects.js";
import { loopPacer } from "../../kit/loop-pacer.js";
import { livenessOf } from "../liveness.js";
import type { FleetSummary } from "../shared.js";

/** What the summary reads of the replica's view: structural, so this front imports nothing of the service. */
export type FleetState = {
  agents(): Iterable<{ status: string; approval?: { state: string } | undefined; trust_lapse?: { state: string } | undefined; instances: ReadonlyMap<string, { instance_id: string; status: string; observed_at: number; heartbeat_interval_ms: number }> }>;
  /** This replica's clock, the one `observed_at` is stamped with. */
  now(): number;
  evictorHolder(): string | null;
  /** The store revision the view has applied: the counts are of this revision (optional for embedders that have none). */
  revision?(): number;
};

/** `alerts`: where the replica's self-preservation alerts are stored (the subject is regional in regional mode). */
export type SummarySettings = { nc: NatsConnection; prefix: string; alerts: { stream: string; subject: string }; missedHeartbeats: number; timeoutMs: number; state: FleetState };

const MIN_AGE_MS = 1000;
const PACE = 5000;
const STATIC_INSTANCE_ID = "static";

export function fleetSummaries(s: SummarySettings): () => Promise<FleetSummary> {
  let last: { at: number; summary: Promise<FleetSummary> } | null = null;
  return () => {
    const now = Date.now();
    if (last === null || now - last.at >= MIN_AGE_MS) last = { at: now, summary: summarize(s) };
    return last.summary;
  };
}

async function summarize(s: SummarySettings): Promise<FleetSummary> {
  // Read when the counting starts, not after the pings: the page rebuilds the hour before it
  // opened from events up to this revision, which the counts must hold exactly.
  const revision = s.state.revision?.() ?? null;
  const at = new Date();
  const [counts, selfPreservation, replicas] = await Promise.all([count(s.state), lastSelfPreservation(s), pingReplicas(s)]);
  return {
    ...counts,
    self_preservation: selfPreservation,
    evictor: s.state.evictorHolder(),
    replicas,
    nats_server: s.nc.info?.version ?? null,
    missed_heartbeats: s.missedHeartbeats,
    now: at.toISOString(),
    revision,
  };
}

async function count(state: FleetState): Promise<Pick<FleetSummary, "instances" | "agent_types" | "approvals">> {
  const byStatus: Record<string, number> = {};
  const approvals = { pending: 0, rejected: 0, withheld: 0 };
  const agentTypes: Record<string, number> = {};
  let total = 0;
  let late = 0;
  let critical = 0;
  const pace = loopPacer(PACE);
  const now = state.now();
  for (const agent of state.agents()) {
    agentTypes[agent.status] = (agentTypes[agent.status] ?? 0) + 1;
    // Every tenant's, as the approvals view lists them.
    if (agent.approval?.state === "pending") approvals.pending++;
    else if (agent.approval?.state === "rejected") approvals.rejected++;
    if (agent.trust_lapse?.state === "withheld") approvals.withheld++;
    for (const i of agent.instances.values()) {
      total++;
      byStatus[i.status] = (byStatus[i.status] ?? 0) + 1;
      if (i.instance_id !== STATIC_INSTANCE_ID) {
        const l = livenessOf(now - i.observed_at, i.heartbeat_interval_ms);
        if (l === "late") late++;
        else if (l === "critical") critical++;
      }
      await pace();
    }
  }
  return { instances: { total, by_status: byStatus, late, critical }, agent_types: agentTypes, approvals };
}

/** The last self-preservation alert in the events stream; inactive when there never was one, null when the stream cannot be read. */
async function lastSelfPreservation(s: SummarySettings): Promise<FleetSummary["self_preservation"]> {
  try {
    const jsm = await jetstreamManager(s.nc, { timeout: s.timeoutMs });
    const m = await jsm.streams.getMessage(s.alerts.stream, { last_by_subj: s.alerts.subject });
    // No alert ever stored (getMessage answers null for "no message found"): eviction was never paused.
    if (m === null) return { active: false, since: "", overdue: 0, live: 0 };
    const e = m.json<{ time?: unknown; data?: { active?: unknown; overdue?: unknown; live?: unknown } }>();
    return {
      active: e.data?.active === true,
      since: typeof e.time === "string" ? e.time : "",
      overdue: typeof e.data?.overdue === "number" ? e.data.overdue : 0,
      live: typeof e.data?.live === "number" ? e.data.live : 0,
    };
  } catch {
    return null;
  }
}

/** The replicas of this registry (this prefix) that answer `$SRV.PING.agent-registry` within the timeout. */
async function pingReplicas(s: SummarySettings): Promise<FleetSummary["replicas"]> {
  try {
    const found: Array<{ id: string; version: string }> = [];
    const answers = await new Svcm(s.nc).client({ strategy: "stall", stall: 150, maxWait: Math.min(1000, s.timeoutMs) }).ping(SERVICE_NAME);
    for await (const r of answers) {
      if (r.metadata?.["prefix"] === s.prefix && found.length < 100) found.push({ id: r.id, version: r.version });
    }
    return found.sort((a, b) => a.id.localeCompare(b.id));
  } catch {
    return null;
  }
}
