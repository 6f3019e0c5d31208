/**
 * Liveness rules of PROTOCOL.md section 4. The deadline is counted once from the heartbeat
 * the registry itself stamped: last_heartbeat + missed x interval (not twice, as in the
 * Eureka bug where the lease was extended by the duration on every renewal and eviction
 * waited a second duration). A grace start (registry start, or a change of the evicting
 * replica) pushes every deadline to at least grace + missed x interval, so an outage of the
 * registry itself never evicts live agents.
 */
import { STATIC_INSTANCE_ID, type InstanceState } from "./model.js";

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
  return Math.max(instance.last_heartbeat + window, graceStart + window);
}

export type EvictionPlan = {
  /** Instances past their deadline, most overdue first. */
  readonly due: InstanceState[];
  readonly live: number;
  /** True when self-preservation holds evictions back. */
  readonly paused: boolean;
  /** Overdue share of live instances. */
  readonly ratio: number;
};

/**
 * Which instances are due at `now`. With self-preservation on, when more than the configured
 * share of live instances are overdue at once (a sign that the registry, not the agents, is
 * cut off) nothing is evicted; the caller reports it. Small fleets (< 10 instances) are never
 * held back, where one agent is already a large share.
 */
export function planEvictions(
  instances: Iterable<InstanceState>,
  now: number,
  graceStart: number,
  policy: LivenessPolicy,
): EvictionPlan {
  const due: Array<{ instance: InstanceState; deadline: number }> = [];
  let live = 0;
  for (const instance of instances) {
    const deadline = evictionDeadline(instance, graceStart, policy);
    if (deadline === null) continue;
    live++;
    if (deadline <= now) due.push({ instance, deadline });
  }
  due.sort((a, b) => a.deadline - b.deadline);
  const ratio = live === 0 ? 0 : due.length / live;
  const paused = policy.selfPreservationRatio > 0 && live >= 10 && ratio > policy.selfPreservationRatio;
  return { due: due.map((d) => d.instance), live, paused, ratio };
}
