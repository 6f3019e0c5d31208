/**
 * Live instances and live agent types before the page opened, rebuilt from the last hour's
 * stored events (no DOM here, so unit tests check it). The summary says how many there are now;
 * each `registered` event added an instance (a live one registering again yields none), and an
 * agent type when it was its first (`first_instance`); each `deregistered` event removed one,
 * and the agent type when it was its last (`agent_removed`). Walking back from the counts at the
 * first sample through the events before it gives the counts at each event. The statuses of
 * those instances are not in the events, nor is late or critical: those are sampled while the
 * page is open only.
 */
import type { CountedEvent } from "./minute-buckets.js";

export type LivePoint = { at: number; instances: number; types: number };

type Change = { at: number; instances: number; types: number };

/** Changes kept: two hours of a busy fleet's registrations is more than a chart needs. */
const MAX_CHANGES = 50_000;

export class LiveHistory {
  readonly #changes: Change[] = [];
  #sorted = true;

  add(e: CountedEvent): void {
    const at = Date.parse(e.time);
    if (!Number.isFinite(at)) return;
    let change: Change | null = null;
    if (e.type === "registry.agent.registered") change = { at, instances: 1, types: e.data["first_instance"] === true ? 1 : 0 };
    if (e.type === "registry.agent.deregistered") change = { at, instances: -1, types: e.data["agent_removed"] === true ? -1 : 0 };
    if (change === null) return;
    const last = this.#changes[this.#changes.length - 1];
    if (last !== undefined && last.at > at) this.#sorted = false;
    this.#changes.push(change);
    if (this.#changes.length > MAX_CHANGES) this.#changes.splice(0, this.#changes.length - MAX_CHANGES);
  }

  /**
   * The counts from `since` (ms) up to `until`, oldest first: one point at `since`, then one at
   * each event before `until`, walking back from `now`, the counts at `until`. A count the
   * events would take below zero (events older than the stream keeps) stays at zero.
   */
  before(until: number, now: { instances: number; types: number }, since: number): LivePoint[] {
    if (!this.#sorted) {
      this.#changes.sort((a, b) => a.at - b.at);
      this.#sorted = true;
    }
    const points: LivePoint[] = [];
    let instances = now.instances;
    let types = now.types;
    for (let i = this.#changes.length - 1; i >= 0; i--) {
      const c = this.#changes[i]!;
      if (c.at >= until) continue;
      if (c.at < since) break;
      points.push({ at: c.at, instances, types });
      instances = Math.max(0, instances - c.instances);
      types = Math.max(0, types - c.types);
    }
    points.push({ at: since, instances, types });
    return points.reverse();
  }
}
