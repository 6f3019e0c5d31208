/**
 * Live instances (by status) and live agent types before the page opened, rebuilt from the
 * last hour's stored events (no DOM here, so unit tests check it). The summary says how many
 * there are now; walking back from the counts at the first sample through the events before it
 * gives the counts at each event:
 * - `registered` added an instance in its `status` (none when `new_instance` is false: a live
 *   instance that overwrote its spec), and an agent type when it was the type's first;
 * - `deregistered` removed one from the `status` it had, and the agent type when it was its last;
 * - `status_changed` moved one from `from` to `to`.
 * Events stored before v1.2 carry no status: the counts by status stop there (null), the
 * totals go on. Late and critical are not in the events: those are sampled while the page is
 * open only.
 */
import type { CountedEvent } from "./minute-buckets.js";

export const LIVE_STATUSES = ["ready", "registered", "draining"] as const;
type LiveStatus = (typeof LIVE_STATUSES)[number];
export type ByStatus = Record<LiveStatus, number>;
export type LivePoint = { at: number; instances: number; types: number; byStatus: ByStatus | null };

/** One event's effect: on the total, on the types, and on each status (unknown: null); `revision` the store's. */
type Change = { at: number; revision: number | null; instances: number; types: number; statuses: Partial<ByStatus> | null };
/** The first sample: its time, and the store revision its counts are of (null from a registry that does not say). */
export type SampleMark = { at: number; revision: number | null };

/** Changes kept: two hours of a busy fleet's registrations is more than a chart needs. */
const MAX_CHANGES = 50_000;

const isLive = (s: unknown): s is LiveStatus => (LIVE_STATUSES as readonly unknown[]).includes(s);

function changeOf(e: CountedEvent, at: number): Change | null {
  const d = e.data;
  const revision = typeof d["revision"] === "number" ? d["revision"] : null;
  if (e.type === "registry.agent.registered") {
    if (d["new_instance"] === false) return { at, revision, instances: 0, types: 0, statuses: {} };
    return { at, revision, instances: 1, types: d["first_instance"] === true ? 1 : 0, statuses: isLive(d["status"]) ? { [d["status"]]: 1 } : null };
  }
  if (e.type === "registry.agent.deregistered") {
    return { at, revision, instances: -1, types: d["agent_removed"] === true ? -1 : 0, statuses: isLive(d["status"]) ? { [d["status"]]: -1 } : null };
  }
  if (e.type === "registry.agent.status_changed") {
    const statuses: Partial<ByStatus> = {};
    if (isLive(d["from"])) statuses[d["from"]] = -1;
    if (isLive(d["to"])) statuses[d["to"]] = (statuses[d["to"]] ?? 0) + 1;
    return { at, revision, instances: 0, types: 0, statuses };
  }
  return null;
}

export class LiveHistory {
  readonly #changes: Change[] = [];
  #sorted = true;

  add(e: CountedEvent): void {
    const at = Date.parse(e.time);
    if (!Number.isFinite(at)) return;
    const change = changeOf(e, at);
    if (change === null) return;
    const last = this.#changes[this.#changes.length - 1];
    if (last !== undefined && last.at > at) this.#sorted = false;
    this.#changes.push(change);
    if (this.#changes.length > MAX_CHANGES) this.#changes.splice(0, this.#changes.length - MAX_CHANGES);
  }

  /**
   * The counts from `since` (ms) up to the first sample, oldest first: one point at `since`,
   * then one at each event the sample's counts hold, walking back from `now`, those counts.
   * The counts hold the events up to the sample's revision (by time, from a registry that gives
   * none: then an event the view had not applied yet when it counted can be off by one). A count
   * the events would take below zero (events older than the stream keeps) stays at zero.
   */
  before(until: SampleMark, now: { instances: number; types: number; byStatus: ByStatus }, since: number): LivePoint[] {
    if (!this.#sorted) {
      this.#changes.sort((a, b) => a.at - b.at);
      this.#sorted = true;
    }
    const points: LivePoint[] = [];
    let { instances, types } = now;
    let byStatus: ByStatus | null = { ...now.byStatus };
    for (let i = this.#changes.length - 1; i >= 0; i--) {
      const c = this.#changes[i]!;
      const held = until.revision !== null && c.revision !== null ? c.revision <= until.revision : c.at < until.at;
      if (!held) continue;
      if (c.at < since) break;
      points.push({ at: c.at, instances, types, byStatus: byStatus && { ...byStatus } });
      instances = Math.max(0, instances - c.instances);
      types = Math.max(0, types - c.types);
      if (byStatus !== null && c.statuses === null) byStatus = null;
      if (byStatus !== null && c.statuses !== null) {
        for (const s of LIVE_STATUSES) byStatus[s] = Math.max(0, byStatus[s] - (c.statuses[s] ?? 0));
      }
    }
    points.push({ at: since, instances, types, byStatus });
    return points.reverse();
  }
}
