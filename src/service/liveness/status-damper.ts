/**
 * A bound on stored status changes per instance. Eight instances toggling ready/draining as
 * fast as they could stored 110,880 events (51 MB) in 10 s (docs/reliability.md): every change
 * is a store write and a stored event. Now an instance's status changes at most once per
 * window; a change asked for within the window is held (the heartbeat still refreshes the
 * instance's liveness with the stored status), the latest one held wins, and it is written when
 * the window ends, unless the instance came back to its stored status meanwhile, in which
 * case nothing changes at all.
 */
import type { InstanceStatus } from "../../protocol/states.js";
import type { Clock } from "../clock.js";

type Recent = { changedAt: number; pending: InstanceStatus | null; timer: NodeJS.Timeout | null };

export type StatusDamperDeps = {
  /** Shortest time between two stored status changes of one instance (0: no bound). */
  windowMs: number;
  clock: Clock;
  /** Writes a held status once its window ended (a heartbeat carrying it). */
  flush: (agentType: string, instanceId: string, status: InstanceStatus) => void;
  /** Told of each change that was held. */
  onHeld?: () => void;
};

/** Instances whose last change is older than this many windows are forgotten by the sweep. */
const SWEEP_EVERY_MS = 10_000;

export class StatusDamper {
  private readonly recent = new Map<string, Recent>();
  private readonly sweeper: NodeJS.Timeout | null;

  constructor(private readonly deps: StatusDamperDeps) {
    this.sweeper = deps.windowMs > 0 ? setInterval(() => this.sweep(), Math.max(SWEEP_EVERY_MS, deps.windowMs)).unref() : null;
  }

  /** Instances this damper remembers (held changes, and changes within the window). */
  get size(): number {
    return this.recent.size;
  }

  /**
   * The status a heartbeat may store now: `wanted` when the instance's status has not changed
   * within the window (or nothing changes), else `stored`, the wanted one being held.
   */
  admit(agentType: string, instanceId: string, stored: InstanceStatus, wanted: InstanceStatus | undefined): InstanceStatus {
    // Most heartbeats ask for no change: they cost no key and no lookup here.
    if (this.deps.windowMs <= 0 || wanted === undefined) return wanted ?? stored;
    const key = keyOf(agentType, instanceId);
    const r = this.recent.get(key);
    const now = this.deps.clock.now();
    if (r === undefined || now - r.changedAt >= this.deps.windowMs) return wanted;
    // Within the window: hold the latest wish; back to the stored status means nothing to write.
    r.pending = wanted === stored ? null : wanted;
    if (r.pending === null) return stored;
    this.deps.onHeld?.();
    r.timer ??= setTimeout(() => this.release(agentType, instanceId, key), r.changedAt + this.deps.windowMs - now).unref();
    return stored;
  }

  /** A status change was stored for this instance. */
  changed(agentType: string, instanceId: string): void {
    if (this.deps.windowMs <= 0) return;
    const key = keyOf(agentType, instanceId);
    const r = this.recent.get(key);
    if (r === undefined) this.recent.set(key, { changedAt: this.deps.clock.now(), pending: null, timer: null });
    else r.changedAt = this.deps.clock.now();
  }

  /** Stops the timers; held changes are dropped (the agent's next heartbeat asks again). */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const r of this.recent.values()) if (r.timer) clearTimeout(r.timer);
    this.recent.clear();
  }

  private release(agentType: string, instanceId: string, key: string): void {
    const r = this.recent.get(key);
    if (r === undefined) return;
    r.timer = null;
    const pending = r.pending;
    r.pending = null;
    if (pending !== null) this.deps.flush(agentType, instanceId, pending);
  }

  private sweep(): void {
    const now = this.deps.clock.now();
    for (const [key, r] of this.recent) if (r.timer === null && r.pending === null && now - r.changedAt >= this.deps.windowMs) this.recent.delete(key);
  }
}

const keyOf = (agentType: string, instanceId: string): string => `${agentType}\u0000${instanceId}`;
