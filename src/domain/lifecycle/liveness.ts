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
import { STATIC_INSTANCE_ID, type InstanceState } from "../view/model.js";

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
  const lateAfter = Math.max(1, Math.min(LATE_INTERVALS, policy.missedHeartbeats - 1));
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
  const paused = policy.selfPreservationRatio > 0 && live >= 10 && due.length > 0 && ratio > policy.selfPreservationRatio;
  return { due: due.map((d) => d.instance), live, paused, ratio, next };
}
