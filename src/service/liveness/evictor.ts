/**
 * Evicts instances whose deadline passed (domain/liveness.ts), on the replica that holds the
 * evictor lease. Every time it compares is on one clock, the one its view stamps `observed_at`
 * with (main.ts passes the same clock to both): never another replica's `last_heartbeat`. An
 * eviction is a compare-and-set of the instance's tombstone against the revision the view saw:
 * a heartbeat that lands first makes it fail, so an instance is never evicted after it
 * heartbeated, and two replicas can never both evict it. Under memory liveness
 * (REGISTRY_LIVENESS=memory) heartbeats write nothing, so a suspect mark written first
 * (judgeMemoryLiveness) is the write the tombstone expects, and a heartbeat to a marked
 * instance is written to clear it. Evictions run with bounded concurrency so a mass expiry
 * stays within the 1 s lateness target.
 * Every 30 s it also has the retention sweep (retention-sweep.ts) remove what outlived the
 * retention period: the lease that makes one replica evict makes one replica sweep.
 */
import { StoreConflictError, type Store } from "../../domain/ports.js";
import { encodeRecord, instanceKey, markedInstanceRecord, RemovalReason } from "../../domain/model/records.js";
import { evictionDeadline, isPaused, judgeMemoryLiveness, planEvictionsWithNext, type Liveness, type LivenessPolicy, type MemoryLivenessJudgement } from "../../domain/lifecycle/liveness.js";
import { CheckWheel } from "../../domain/lifecycle/check-wheel.js";
import type { InstanceState } from "../../domain/model/model.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../../kit/logger.js";
import { RetentionSweep } from "./retention-sweep.js";
import { guardedInterval } from "../../kit/guarded.js";
import { loopPacer } from "../../kit/loop-pacer.js";

const CONCURRENCY = 64;
/** The wall clock moving this much more or less than the monotonic one between two ticks is a step (NTP, a VM resumed). */
const CLOCK_STEP_MS = 1000;
const SWEEP_EVERY_MS = 30_000;
/**
 * A mark written is not re-written for this long while the view has not applied it yet: a
 * view lagging longer only costs a mark write that fails its compare-and-set.
 */
const MARK_PENDING_MS = 1000;
/**
 * Memory liveness: how long a mark may take from its write to this view's apply without
 * delaying the eviction. An eviction falls due a lead after the view applied the mark, so a
 * mark written one tick before `late` and applied later than that pushes the eviction back by
 * the difference: in fleet-1m, marks queued behind a second-long drain of heartbeats on the
 * same connection made eviction lateness p99 1.0-2.6 s from run to run. Marks go out this much
 * (plus a tick) ahead, never more than a quarter interval (judgeMemoryLiveness). Marking early
 * costs little, because only an instance already silent for most of 1.5 intervals gets a mark.
 * It is safe too: the deadline does not move, and the lead after the mark only grows.
 */
const MARK_APPLY_ALLOWANCE_MS = 2000;
/**
 * Memory liveness: more instances written between two ticks than this and the evictor looks at
 * every instance instead of at the written ones (a bulk load, a fleet registering at once).
 */
const TRACKED_CHANGES = 50_000;
/**
 * Memory liveness: instances a pass looks at between two turns of the event loop (about 5 ms
 * of work). A pass over every instance (the first, after a start or takeover) and the wheel's
 * take one and a half intervals later, when every instance it filed then comes due together,
 * each held the loop for 0.9 s at 1,000,000 instances (fleet-1m, docs/performance.md).
 */
const LOOK_SLICE = 5000;

/**
 * The gap between two ticks that counts as a stall: a lease period (past it another replica may
 * have taken over), and never less than four ticks, so that a tick slower than the lease is
 * not taken for a stall at every turn.
 */
export function stallThresholdMs(leaseMs: number, tickMs: number): number {
  return Math.max(leaseMs, 4 * tickMs);
}

export type EvictorHooks = {
  onEvicted?: (instance: InstanceState, latenessMs: number) => void;
  /** Memory liveness: a suspect mark was stored. */
  onMarked?: (instance: InstanceState) => void;
  /** The evictor found it had not run for `stallMs`, or the wall clock stepped: grace restarted. */
  onStall?: (detail: { monotonicGapMs: number; wallGapMs: number }) => void;
  onSelfPreservation?: (active: boolean, detail: { overdue: number; live: number; ratio: number }) => void;
};

export class Evictor {
  private timer: NodeJS.Timeout | null = null;
  private graceStart = 0;
  private running = false;
  private readonly inFlight = new Set<string>();
  private lastSweep = 0;
  private preserving = false;
  /** The NATS connection is down: no pass runs (see `disconnected`). */
  private offline = false;
  /** Store liveness: no instance can be due before this time unless one is written (the view reports writes). */
  private nextCheck = -Infinity;
  private readonly retention: RetentionSweep;
  /** Wall and monotonic time of the last tick, to spot a stall or a step of the wall clock. */
  private lastTick: { wall: number; monotonic: number } | null = null;
  private readonly monotonic: () => number;
  /** Memory liveness: marks written and when, until the view applies them (MARK_PENDING_MS). */
  private readonly marksPending = new Map<string, number>();
  /** Memory liveness: when each live instance is next worth a look (check-wheel.ts); empty until the first pass files every instance. */
  private readonly wheel: CheckWheel;
  /** How far ahead of `late` a mark is written (see MARK_APPLY_ALLOWANCE_MS). */
  private readonly markAheadMs: number;
  private wheelFilled = false;
  /**
   * Memory liveness: instances found late, a superset of those late now (each is judged again
   * when counted). Self-preservation compares their number with the fleet's; a pass over the
   * fleet to count them would undo what the wheel saves, and an instance is always looked at
   * when it turns late (judgeMemoryLiveness files it for then).
   */
  private readonly late = new Set<InstanceState>();

  constructor(
    private readonly deps: {
      store: Store;
      view: RegistryView;
      clock: Clock;
      log: Logger;
      policy: LivenessPolicy;
      tickMs: number;
      retentionMs: number;
      /** A gap between two ticks longer than this (monotonic) is a stall (stallThresholdMs in production). */
      stallMs: number;
      /**
       * "memory": heartbeats are answered from memory, so the evictor marks a late instance
       * suspect and evicts only one whose mark it has held for the lead (judgeMemoryLiveness).
       * "store" (the default): every heartbeat is a write, which arbitrates by itself.
       */
      liveness?: Liveness;
      /** Monotonic milliseconds; performance.now() unless a test drives it. */
      monotonic?: () => number;
      /** Instances a pass looks at between two turns of the event loop; LOOK_SLICE unless a test sets it. */
      lookSlice?: number;
      hooks?: EvictorHooks;
    },
  ) {
    this.monotonic = deps.monotonic ?? (() => performance.now());
    this.retention = new RetentionSweep({ store: deps.store, view: deps.view, log: deps.log, retentionMs: deps.retentionMs });
    this.wheel = new CheckWheel(deps.tickMs);
    this.markAheadMs = deps.tickMs + MARK_APPLY_ALLOWANCE_MS;
    if (deps.liveness === "memory") deps.view.trackInstanceChanges(TRACKED_CHANGES);
  }

  /** Starts evicting; no deadline falls before `graceStart` + the instance's eviction window. */
  start(graceStart: number): void {
    this.stop();
    this.graceStart = graceStart;
    this.nextCheck = -Infinity;
    this.lastTick = null;
    this.marksPending.clear();
    this.wheel.clear();
    this.wheelFilled = false;
    this.late.clear();
    this.lastSweep = this.deps.clock.now();
    this.timer = guardedInterval(this.deps.log, "eviction tick", () => this.tick(), this.deps.tickMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.preserving) this.setPreserving(false, { overdue: 0, live: 0, ratio: 0 });
  }

  get active(): boolean {
    return this.timer !== null;
  }

  /**
   * The store failed a write or read (a heartbeat, an eviction): heartbeats may have been lost
   * meanwhile, so, as after a registry start, nothing is evicted before a whole eviction
   * window has passed since. Without this, a store outage longer than the window (a stream
   * leader election on a cluster takes seconds) ended with every instance whose heartbeats
   * could not be stored evicted in the first pass after the store came back.
   */
  storeUnavailable(at: number): void {
    if (at > this.graceStart) this.graceStart = at;
  }

  /**
   * This replica lost its NATS connection. No heartbeat can reach it meanwhile, so the view
   * would soon call every instance overdue; worse, nats.js queues what is published while
   * disconnected and sends it after the reconnect, where an eviction decided in the dark
   * could still succeed (no heartbeat could be stored in between to make its compare-and-set
   * fail). So no pass runs until `reconnected`.
   */
  disconnected(): void {
    this.offline = true;
  }

  /**
   * Back on NATS: heartbeats sent while this replica was cut off never reached it, so, as
   * after a store failure, every instance gets a whole window to be heard again. Without this
   * a replica that kept its lease through a server restart could evict every instance whose
   * heartbeat had not come back before its old deadline (the NATS kill -9 fault test).
   */
  reconnected(at: number): void {
    this.offline = false;
    this.storeUnavailable(at);
  }

  /**
   * A stall (SIGSTOP, a suspended VM, swap, a very long collection) or a step of the wall
   * clock since the last tick. Heartbeats that came in meanwhile sit unread in the socket,
   * and after a stall the timers can run before the reads: the first pass would find every
   * instance overdue on a view that has not yet applied them, and its compare-and-set would
   * succeed because nothing was written since. A wall clock stepped forward makes every
   * deadline pass at once in the same way. Either is handled as a reconnect: every instance
   * gets a whole window, from now, to be heard again.
   */
  private checkStall(wall: number): void {
    const monotonic = this.monotonic();
    const last = this.lastTick;
    this.lastTick = { wall, monotonic };
    if (last === null) return;
    const monotonicGapMs = monotonic - last.monotonic;
    const wallGapMs = wall - last.wall;
    if (monotonicGapMs <= this.deps.stallMs && Math.abs(wallGapMs - monotonicGapMs) <= CLOCK_STEP_MS) return;
    this.storeUnavailable(wall);
    this.nextCheck = -Infinity;
    // Filed on the old clock: a step back would leave the wheel's slots ahead of the new one.
    this.wheelFilled = false;
    this.deps.log.warn(
      { monotonic_gap_ms: Math.round(monotonicGapMs), wall_gap_ms: Math.round(wallGapMs), window_from: wall },
      monotonicGapMs > this.deps.stallMs ? "the evictor stalled: every instance gets a whole window to be heard again" : "the wall clock stepped: every instance gets a whole window to be heard again",
    );
    this.deps.hooks?.onStall?.({ monotonicGapMs, wallGapMs });
  }

  /** One pass; exposed for tests that drive a manual clock. */
  async tick(): Promise<void> {
    // Before the early returns: a stall is measured between timer runs, whatever they did.
    this.checkStall(this.deps.clock.now());
    if (this.running || this.offline) return;
    this.running = true;
    try {
      const now = this.deps.clock.now();
      // A pass over every instance cost 10% of a core at 100,000 instances when it ran every
      // tick (docs/performance.md). It runs only once something can be due: at the earliest
      // deadline the last pass saw, or earlier if a write brought an instance closer.
      const changed = this.deps.view.takeInstanceChanges();
      const memory = this.deps.liveness === "memory";
      if (changed && !memory) this.nextCheck = Math.min(this.nextCheck, changed.minObservedAt + this.deps.policy.missedHeartbeats * changed.minIntervalMs);
      if (memory) await this.memoryPass(now, changed === null ? [] : changed.instances);
      else if (now >= this.nextCheck) {
        const plan = planEvictionsWithNext(this.liveInstances(), now, this.graceStart, this.deps.policy);
        const overdue = plan.due.length;
        // While any is due (held back by self-preservation, or its eviction failed), look every tick.
        this.nextCheck = overdue > 0 ? now : plan.next;
        const wasPreserving = this.preserving;
        this.setPreserving(plan.paused, { overdue, live: plan.live, ratio: plan.ratio });
        if (wasPreserving && !plan.paused) {
          // Heartbeats are coming back, on phases spread over an interval: as after a grace
          // start, every instance gets a whole window to be heard again before it can be
          // evicted (else the ones not yet heard when the share fell under the ratio would go).
          this.graceStart = now;
        } else if (!plan.paused && overdue > 0) await this.evictAll(plan.due, now);
      }
      if (now - this.lastSweep >= SWEEP_EVERY_MS) {
        this.lastSweep = now;
        await this.retention.run(now);
      }
    } catch (e) {
      this.deps.log.error({ err: e }, "eviction pass failed");
    } finally {
      this.running = false;
    }
  }

  /**
   * One pass under memory liveness: marks for the late, tombstones for the marked and due. It
   * looks at the instances written since the last pass (`written`; null: too many, or not
   * known) and those the wheel holds for now; the first pass, and one after `written` came
   * null, look at every instance and fill the wheel.
   */
  private async memoryPass(now: number, written: InstanceState[] | null): Promise<void> {
    for (const [k, at] of this.marksPending) if (now - at >= MARK_PENDING_MS) this.marksPending.delete(k);
    const marks: InstanceState[] = [];
    const due: Array<{ i: InstanceState; at: number }> = [];
    // Set by a full pass: the instances it spreads (spreadAt), and how many there are.
    let spread: { next: number; of: number } | null = null;
    const look = (i: InstanceState): void => {
      const j = this.judge(i, now);
      if (j === null) return;
      if (j.late) this.late.add(i);
      if (j.action === null) {
        this.wheel.file(i, spread === null ? j.at : this.spreadAt(i, j.at, now, spread.next++ / spread.of));
        return;
      }
      if (j.action === "mark") marks.push(i);
      else due.push({ i, at: j.at });
      // Looked at again next pass, whether acted on now or not (paused, in flight, mark pending).
      this.wheel.file(i, now);
    };
    // Judged at `now` even when the pass spans turns of the loop: a heartbeat heard meanwhile
    // only makes an instance less late, and every write is a compare-and-set on the revision
    // judged, so an instance that changed or left meanwhile is not acted on by a stale look.
    const pace = loopPacer(this.deps.lookSlice ?? LOOK_SLICE);
    const grace = this.graceStart;
    const timer = this.timer;
    const full = !this.wheelFilled || written === null;
    if (full) {
      this.wheel.clear();
      // Before the looks: a stall found meanwhile (checkStall) asks for another full pass.
      this.wheelFilled = true;
      const all = this.liveInstances();
      spread = { next: 0, of: all.length };
      for (const i of all) {
        // Left meanwhile: filed, it would only be taken and dropped later.
        if (!this.isLive(i)) continue;
        look(i);
        const turn = pace();
        if (turn) await turn;
      }
    } else {
      // Taken first: what `look` files now is for the next pass. An instance written twice, or
      // written and due, is looked at once; the wheel gives each at most once, and most ticks
      // nothing was written: no set for them.
      const taken = this.wheel.take(now);
      const seen = written.length > 0 ? new Set<InstanceState>() : null;
      for (const i of written) {
        if (seen!.has(i) || !this.isLive(i)) continue;
        seen!.add(i);
        look(i);
        const turn = pace();
        if (turn) await turn;
      }
      for (const i of taken) {
        if (seen?.has(i) === true || !this.isLive(i)) continue;
        look(i);
        const turn = pace();
        if (turn) await turn;
      }
    }
    // While the pass gave the loop back, a stall, a store failure, a lost connection or the
    // lease's loss (stop) may have changed what can be due: nothing is acted on, and the next
    // pass judges again; a full pass cut short this way is made whole again then.
    if (this.graceStart !== grace || this.offline || this.timer !== timer) {
      if (full) this.wheelFilled = false;
      return;
    }
    const pending = marks.length + due.length;
    const { live, ratio } = pending > 0 || this.preserving ? this.lateShare(now) : { live: 0, ratio: 0 };
    const paused = isPaused(this.deps.policy, live, pending, ratio);
    const wasPreserving = this.preserving;
    this.setPreserving(paused, { overdue: pending, live, ratio });
    if (wasPreserving && !paused) {
      this.graceStart = now;
      return;
    }
    if (paused || pending === 0) return;
    due.sort((a, b) => a.at - b.at);
    const toMark = marks.filter((i) => !this.marksPending.has(key(i)));
    await this.runBounded([...due.map(({ i }) => ({ i, evict: true })), ...toMark.map((i) => ({ i, evict: false }))], (op) => (op.evict ? this.evict(op.i, now) : this.mark(op.i, now)));
  }

  /**
   * Where a full pass files an instance judged by the grace start rather than by a heartbeat
   * (none heard since the window began: after a start or a takeover, all of them). Filed for
   * its own time, every such instance would come due in the same slot, and the wheel would hand
   * out a million at once (0.15 s of blocked loop at fleet-1m, even with the pass in slices).
   * Looking early is harmless: judged then, it is filed again for its time. So they are spread,
   * by `share` (0 to 1, the instance's place in the pass), between one interval after the
   * window began, by when every live instance has been heard and is filed by its own heartbeat
   * at that look, and the time it was judged for.
   */
  private spreadAt(i: InstanceState, at: number, now: number, share: number): number {
    if (i.observed_at >= this.graceStart) return at;
    const from = Math.max(now, this.graceStart) + i.heartbeat_interval_ms;
    return from >= at ? at : from + (at - from) * share;
  }

  /** One instance under memory liveness, by this evictor's grace start, policy and mark lead: the wheel and self-preservation must judge alike. */
  private judge(i: InstanceState, now: number): MemoryLivenessJudgement | null {
    return judgeMemoryLiveness(i, now, this.graceStart, this.deps.policy, this.markAheadMs);
  }

  /** The view holds this very instance (not one that left, nor a newer copy after it left and came back). */
  private isLive(i: InstanceState): boolean {
    return this.deps.view.instance(i.agent_type, i.instance_id) === i;
  }

  /** Live instances (the static ones aside) and the share of them late now; see `late`. */
  private lateShare(now: number): { live: number; ratio: number } {
    const live = this.deps.view.expiringInstanceCount();
    let late = 0;
    for (const i of this.late) {
      if (this.isLive(i) && this.judge(i, now)?.late) late++;
      else this.late.delete(i);
    }
    return { live, ratio: live <= 0 ? 0 : late / live };
  }

  /**
   * A suspect mark, compare-and-set on the revision the view holds: a heartbeat written
   * meanwhile (a status change, a clear) makes it fail, and the next pass judges again.
   */
  private async mark(instance: InstanceState, now: number): Promise<void> {
    await this.writeInstance(instance, "suspect mark", encodeRecord(markedInstanceRecord(instance, now)), () => {
      this.marksPending.set(key(instance), now);
      this.deps.hooks?.onMarked?.(instance);
      this.deps.log.debug({ agent_type: instance.agent_type, instance_id: instance.instance_id }, "marked suspect");
    });
  }

  /**
   * A compare-and-set of the instance's key against the revision this pass judged, with the
   * instance in flight meanwhile. A lost race (a heartbeat, or another replica, got there
   * first) is left to the next pass; a store that failed restarts the grace window.
   */
  private async writeInstance(instance: InstanceState, what: string, record: Uint8Array, then: () => void): Promise<void> {
    const k = key(instance);
    this.inFlight.add(k);
    try {
      await this.deps.store.write(instanceKey(instance.agent_type, instance.instance_id), record, instance.revision);
      then();
    } catch (e) {
      if (!(e instanceof StoreConflictError)) {
        this.storeUnavailable(this.deps.clock.now());
        this.deps.log.warn({ err: e, instance: k }, `${what} write failed`);
      }
    } finally {
      this.inFlight.delete(k);
    }
  }

  /** Runs `op` over copies of the instances not already in flight, CONCURRENCY at a time. */
  private async runBounded<T extends { i: InstanceState }>(ops: T[], op: (o: T) => Promise<void>): Promise<void> {
    // Copies: the view updates a live instance in place, and a compare-and-set must expect
    // the revision this pass judged, not one written meanwhile.
    const queue = ops.filter((o) => !this.inFlight.has(key(o.i))).map((o) => ({ ...o, i: { ...o.i } }));
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next; next = queue.shift()) await op(next);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  }

  /** Every live instance. An array, not a generator: a pass over 100,000 took half the time. */
  private liveInstances(): InstanceState[] {
    const all: InstanceState[] = [];
    for (const agent of this.deps.view.all()) agent.instances.forEach((i) => all.push(i));
    return all;
  }

  private async evictAll(due: InstanceState[], now: number): Promise<void> {
    await this.runBounded(
      due.map((i) => ({ i })),
      (o) => this.evict(o.i, now),
    );
  }

  private async evict(instance: InstanceState, now: number): Promise<void> {
    const record = encodeRecord({
      kind: "gone",
      version: instance.version,
      reason: RemovalReason.Evicted,
      at: now,
      registered_at: instance.registered_at,
      last_heartbeat: instance.last_heartbeat,
    });
    await this.writeInstance(instance, "eviction", record, () => {
      const deadline = evictionDeadline(instance, this.graceStart, this.deps.policy) ?? now;
      const lateness = this.deps.clock.now() - deadline;
      this.deps.hooks?.onEvicted?.(instance, lateness);
      this.deps.log.info({ agent_type: instance.agent_type, instance_id: instance.instance_id, lateness_ms: lateness }, "evicted");
    });
  }

  private setPreserving(active: boolean, detail: { overdue: number; live: number; ratio: number }): void {
    if (active === this.preserving) return;
    this.preserving = active;
    this.deps.log.warn({ ...detail, active }, active ? "self-preservation: evictions paused" : "self-preservation over: evictions resume");
    this.deps.hooks?.onSelfPreservation?.(active, detail);
  }
}

const key = (i: InstanceState): string => `${i.agent_type}.${i.instance_id}`;
