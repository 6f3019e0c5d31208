/**
 * Liveness rules of PROTOCOL.md section 4. The deadline is counted once from the last
 * heartbeat: observed_at + missed x interval (not twice, as in the Eureka bug where the lease
 * was extended by the duration on every renewal and eviction waited a second duration).
 * One clock only: `observed_at` is when the evicting replica's own view applied the heartbeat,
 * on its own clock, as are `now` and the grace start. The stored `last_heartbeat` is stamped by
 * whichever replica took the heartbeat, and comparing it with the evictor's clock evicted live
 * agents whenever the two machines' clocks disagreed by more than a window (issue 14).
 * A grace start (registry start, or a change of the evicting replica) pushes every deadline
 * to at least grace + missed x interval, so an outage of the registry itself never evicts
 * live agents; it also covers instances loaded at start, observed only then.
 */
import { STATIC_INSTANCE_ID, type InstanceState } from "../model/model.js";

export type LivenessPolicy = {
  readonly missedHeartbeats: number;
  /** Share of live instances (0..1) that may be overdue at once before evictions pause; 0 = off. */
  readonly selfPreservationRatio: number;
};

export function evictionWindow(instance: Pick<InstanceState, "heartbeat_interval_ms">, policy: LivenessPolicy): number {
  return policy.missedHeartbeats * instance.heartbeat_interval_ms;
}

/** When the instance is to be evicted, or null for instances that never expire. */
export function evictionDeadline(instance: InstanceState, graceStart: number, policy: LivenessPolicy): number | null {
  if (instance.instance_id === STATIC_INSTANCE_ID) return null;
  const window = evictionWindow(instance, policy);
  return Math.max(instance.observed_at + window, graceStart + window);
}

export type EvictionPlan = {
  /** Instances past their deadline, most overdue first. */
  readonly due: InstanceState[];
  readonly live: number;
  /** True when self-preservation holds evictions back. */
  readonly paused: boolean;
  /** Share of live instances that missed a heartbeat (late); it includes every due one. */
  readonly ratio: number;
};

/**
 * An instance is late once it missed a heartbeat: silent for 1.5 intervals (fewer when the
 * eviction window is shorter), well before its deadline at `missedHeartbeats` intervals.
 */
export const LATE_INTERVALS = 1.5;

/**
 * Which instances are due at `now`. With self-preservation on, when more than the configured
 * share of live instances are late (a sign that the registry, not the agents, is cut off)
 * nothing is evicted; the caller reports it. Late, not due: a fleet heartbeats on phases
 * spread over an interval, so when the registry stops hearing it, its instances fall due
 * one by one, and a share of the due ones stays small while they are evicted one by one;
 * all of them are late before the first one falls due. Small fleets (< 10 instances) are
 * never held back, where one agent is already a large share.
 */
export function planEvictions(
  instances: Iterable<InstanceState>,
  now: number,
  graceStart: number,
  policy: LivenessPolicy,
): EvictionPlan {
  const { next: _next, ...plan } = planEvictionsWithNext(instances, now, graceStart, policy);
  return plan;
}

/**
 * planEvictions, plus the earliest deadline still ahead (Infinity when none): until then
 * nothing can fall due unless an instance is written, so a caller told of writes
 * (RegistryView.takeInstanceChanges) can skip passes over the whole fleet.
 */
export function planEvictionsWithNext(
  instances: Iterable<InstanceState>,
  now: number,
  graceStart: number,
  policy: LivenessPolicy,
): EvictionPlan & { readonly next: number } {
  const due: Array<{ instance: InstanceState; deadline: number }> = [];
  let live = 0;
  let late = 0;
  let next = Infinity;
  const lateAfter = lateIntervals(policy.missedHeartbeats);
  for (const instance of instances) {
    const deadline = evictionDeadline(instance, graceStart, policy);
    if (deadline === null) continue;
    live++;
    if (deadline <= now) due.push({ instance, deadline });
    else if (deadline < next) next = deadline;
    if (deadline <= now || now - Math.max(instance.observed_at, graceStart) >= lateAfter * instance.heartbeat_interval_ms) late++;
  }
  due.sort((a, b) => a.deadline - b.deadline);
  const ratio = live === 0 ? 0 : late / live;
  // Paused only while something is due: lateness alone holds nothing back and raises no alert.
  const paused = isPaused(policy, live, due.length, ratio);
  return { due: due.map((d) => d.instance), live, paused, ratio, next };
}

/** Intervals of silence after which an instance is late (and, under memory liveness, marked). */
export function lateIntervals(missedHeartbeats: number): number {
  return Math.max(1, Math.min(LATE_INTERVALS, missedHeartbeats - 1));
}

/** How heartbeats are kept: each a stored write, or answered from memory with suspect marks (REGISTRY_LIVENESS). */
export type Liveness = "store" | "memory";

/** Whether the instance carries a suspect mark (memory liveness). */
export const isSuspect = (i: Pick<InstanceState, "suspect_since">): boolean => i.suspect_since !== undefined && i.suspect_since !== null;

/** Self-preservation holds marks and evictions back while more than the ratio of the fleet is late. */
export function isPaused(policy: LivenessPolicy, live: number, pending: number, ratio: number): boolean {
  return policy.selfPreservationRatio > 0 && live >= 10 && pending > 0 && ratio > policy.selfPreservationRatio;
}

export type MemoryLivenessJudgement = {
  /** Not heard for `late` intervals (counted for self-preservation). */
  readonly late: boolean;
  /** What the evictor does now, if anything. */
  readonly action: "mark" | "evict" | null;
  /** With an action: the deadline (evictions run in its order). Without: when the judgement can next change, unless the instance is written meanwhile. */
  readonly at: number;
};

/**
 * Memory liveness (docs/architecture.md, "Suspect marks"): heartbeats answered from memory
 * write nothing, so a stored write no longer arbitrates between a heartbeat and an eviction;
 * a suspect mark does. An instance late on this clock is marked first; at its deadline it is
 * due only if this view has held the mark for the lead, `window - late x interval`, so that
 * any replica answering the instance meanwhile has seen the mark and cleared it with a write
 * (whose compare-and-set then beats the tombstone's). The deadline itself is the same as under
 * store liveness (evictionDeadline), so eviction is never earlier; it is later by at most how
 * late the mark was applied. Self-preservation (isPaused) holds marks back along with
 * evictions. `markAheadMs` is how early the caller marks (see the mark below).
 *
 * Judges one instance; null for the static instance. The evictor's schedule (check-wheel.ts)
 * looks at an instance again at `at`: heard meanwhile, its times only move later, and a write
 * of it is reported by the view.
 */
export function judgeMemoryLiveness(instance: InstanceState, now: number, graceStart: number, policy: LivenessPolicy, markAheadMs = 0): MemoryLivenessJudgement | null {
  if (instance.instance_id === STATIC_INSTANCE_ID) return null;
  const interval = instance.heartbeat_interval_ms;
  const base = Math.max(instance.observed_at, graceStart);
  const lateAt = base + lateIntervals(policy.missedHeartbeats) * interval;
  const late = lateAt <= now;
  if (!isSuspect(instance)) {
    // Marked `markAheadMs` early (the evictor: a tick, and time for the mark to be applied),
    // at most a quarter interval: a mark applied after `late` would push the eviction past the
    // deadline by as much, through the lead.
    const markAt = lateAt - Math.min(markAheadMs, 0.25 * interval);
    return markAt <= now ? { late, action: "mark", at: markAt } : { late, action: null, at: markAt };
  }
  const leadIntervals = policy.missedHeartbeats - lateIntervals(policy.missedHeartbeats);
  const at = Math.max(base + policy.missedHeartbeats * interval, (instance.mark_seen_at ?? 0) + leadIntervals * interval);
  if (at <= now) return { late, action: "evict", at };
  // A mark applied before `late` (written ahead): look again when the instance turns late, so
  // that it is counted for self-preservation from then on.
  return { late, action: null, at: late ? at : Math.min(at, lateAt) };
}
