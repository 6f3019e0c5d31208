/**
 * Keeps this replica's view in step with the bucket. A KV watch is an ordered consumer that
 * the client recreates silently, and a watch that dies unnoticed is the classic failure
 * (nats.go#1094, nats.rs#1596), so this feed does not trust it alone:
 *  - it resumes from the last revision it applied whenever the watch ends or errors, with
 *    backoff (tight recreate loops leaked consumers in reconnect storms: openobserve#13594);
 *  - it restarts the watch at once after the connection reconnects (the server may have lost
 *    the consumer, and waiting for missed heartbeats costs ~10 s);
 *  - it compares the store's last revision with what it applied every few seconds, and a lag
 *    that does not move is treated as a dead watch.
 * Applying is idempotent by revision, so overlap on resume is harmless.
 *
 * Events are derived from changes after the initial load; the load's own entries are history.
 * One exception: writes after the last stored event whose events were never stored (the only
 * replica died first). The load then stops short of them, rebuilds the view as it was before
 * them from the bucket's kept values (event-recovery.ts) and replays them, deriving their events.
 */
import type { StoreReader, StoreEntry, StoreHistory, StoreWatch } from "../../domain/ports.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { StoreEvent } from "../../domain/view/events.js";
import { parseKey } from "../../domain/model/records.js";
import { isTrustRootsKey } from "../../domain/trust/bucket-trust.js";
import { isSubjectClaimKey } from "../../domain/model/subject-claims.js";
import type { Logger } from "../../kit/logger.js";
import { guardedInterval } from "../../kit/guarded.js";
import { UnreadableRecords } from "./unreadable-records.js";
import { RevisionWaiters, type RevisionWait } from "./revision-waiters.js";

/** Requests that may wait for a revision at once when the composition root sets no bound. */
export const DEFAULT_MAX_REVISION_WAITERS = 1000;
import { planRecovery } from "../events/event-recovery.js";

/** Agent types whose schemas are shared per batch (about 10 ms), and how often. */
const SHARE_BATCH = 500;
const SHARE_EVERY_MS = 100;
/**
 * Most revisions a start replays to recover unstored events: beyond them the gap is logged and
 * counted instead, so a start stays bounded. (The keys they wrote are at most as many, and
 * their earlier values are found in one pass over the bucket: event-recovery.ts.)
 */
const MAX_RECOVERY_REVISIONS = 100_000;

export type ViewFeedDeps = {
  store: StoreReader;
  view: RegistryView;
  log: Logger;
  /** Events derived from changes after the initial load, in store order. */
  onEvents: (events: readonly StoreEvent[]) => void;
  /** Entries of reserved keys other than subject claims (the evictor lease); claims go to the view. */
  onReserved: (entry: StoreEntry) => void;
  onRestart?: (reason: string) => void;
  onLag?: (lag: number) => void;
  /** An entry was skipped because its record could not be read (counted in a metric). */
  onUnreadable?: () => void;
  checkIntervalMs?: number;
  /** Requests that may wait in waitForRevision at once; past it a wait is refused at once. */
  maxRevisionWaiters?: number;
  /** The values the store keeps per key; without it (or with one), no recovery. */
  history?: StoreHistory;
  /** Revision of the last stored event, null when none: where recovery starts. */
  lastStoredRevision?: () => Promise<number | null>;
  /**
   * A revision through which every event is known to be stored (the publisher's watermark in
   * the lease value), null when none: recovery starts after it when it is later. Heartbeats
   * are writes without events, so after a quiet spell this is far past the last stored event.
   */
  publishedThrough?: () => Promise<number | null>;
  /** Keys whose events after the last stored one could not be derived. */
  onUnrecoverable?: (keys: number) => void;
};

export class ViewFeed {
  private watch: StoreWatch | null = null;
  private stopped = false;
  private loadedAt = -1;
  private loadTarget = 0;
  private readonly loadedWaiters: Array<() => void> = [];
  private readonly waiters: RevisionWaiters;
  private checkTimer: NodeJS.Timeout | null = null;
  private shareTimer: NodeJS.Timeout | null = null;
  private lastCheckedRevision = -1;
  private stalledChecks = 0;
  private failures = 0;
  private reloadPending = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  /** Set while loading when writes after this revision may lack their stored events. */
  private recoverAfter: number | null = null;
  /** The load reached writes to recover; `loadEnd` is the revision that ended it. */
  private recoveryDue = false;
  private loadEnd = 0;
  private replaying = false;
  /** Set while recover() reads and replays; the lag check leaves it alone. */
  private recovering = false;
  /**
   * The revision of the last entry the watch delivered, applied or not: the load skips the
   * writes it will recover, so the view's revision alone stood still, the lag check took the
   * load for a dead watch, and every restart began the load again (issue 14: 23 s to ready).
   */
  private delivered = 0;
  private lastCheckedDelivered = -1;

  private readonly unreadable: UnreadableRecords;
  /** While the loop waits for the store to create a watch: gives that creation up. */
  private abandonCreation: (() => void) | null = null;

  constructor(private readonly deps: ViewFeedDeps) {
    this.unreadable = new UnreadableRecords(deps.log, deps.onUnreadable);
    this.waiters = new RevisionWaiters(deps.maxRevisionWaiters ?? DEFAULT_MAX_REVISION_WAITERS);
    deps.view.onUnreadable((key, revision, problem) => this.unreadable.report(key, revision, problem));
  }

  /** True once the view holds everything the store held when the feed started. */
  get loaded(): boolean {
    return this.loadedAt >= 0;
  }

  async start(): Promise<void> {
    this.loadTarget = await this.deps.store.lastRevision();
    if (this.loadTarget === 0) this.markLoaded();
    else {
      // Nothing is served before the first load ends: the view need not derive events or
      // update its indexes entry by entry meanwhile (RegistryView.beginQuietLoad).
      this.deps.view.beginQuietLoad();
      this.recoverAfter = await this.recoveryPoint();
    }
    this.loop = this.run();
    const { log } = this.deps;
    this.checkTimer = guardedInterval(log, "view lag check", () => this.checkLag(), this.deps.checkIntervalMs ?? 3000);
    // Equal capability schemas are made to share one copy in small batches once loaded, so
    // neither the load nor a request waits for it (RegistryView.shareSchemas).
    this.shareTimer = guardedInterval(log, "schema sharing", () => this.loaded && this.deps.view.shareSchemas(SHARE_BATCH), SHARE_EVERY_MS);
  }

  /** Resolves once the initial load is complete. */
  whenLoaded(): Promise<void> {
    return this.loaded ? Promise.resolve() : new Promise((resolve) => this.loadedWaiters.push(resolve));
  }

  /** Ends the current watch; the loop resumes from the last applied revision. */
  restart(reason: string): void {
    if (this.stopped) return;
    this.deps.log.info({ reason, revision: this.deps.view.revision }, "restarting the bucket watch");
    this.deps.onRestart?.(reason);
    this.endWatch();
  }

  /** Drops the view and loads it again from the store; events of the reload are not emitted. */
  reload(reason: string): void {
    if (this.stopped) return;
    this.deps.log.error({ reason }, "reloading the view from the store");
    this.reloadPending = true;
    this.endWatch();
  }

  /** Stops the current watch, or abandons the one being created. */
  private endWatch(): void {
    this.abandonCreation?.();
    this.watch?.stop();
  }

  /** Waits until the view has applied `revision`, at most `timeoutMs`; `full` when too many wait already. */
  waitForRevision(revision: number, timeoutMs: number): Promise<RevisionWait> {
    if (this.deps.view.revision >= revision) return Promise.resolve("reached");
    return this.waiters.wait(revision, timeoutMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abandonCreation?.();
    this.wake?.();
    if (this.checkTimer) clearInterval(this.checkTimer);
    if (this.shareTimer) clearInterval(this.shareTimer);
    this.watch?.stop();
    this.waiters.cancelAll();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (this.reloadPending) {
          // Read the target first: if the store is away, nothing is cleared and the next
          // pass tries again, so a half-done reload can never be taken for live changes.
          const target = await this.deps.store.lastRevision();
          this.reloadPending = false;
          this.loadedAt = -1;
          this.deps.view.clear();
          this.loadTarget = target;
          if (this.loadTarget === 0) this.markLoaded();
        }
        // Creating the watch is a consumer the server positions on the last value of every
        // key: seconds against a million keys on nats-server 2.9.10, so a watch of last values
        // is given a minute (kv-store.ts). Meanwhile nothing is delivered, which is no stall (checkLag); a
        // stop, restart or reload abandons it at once rather than waiting on a request that
        // may have been lost with the connection, and the watch is stopped if it comes later.
        const creating = this.deps.store.watch(this.deps.view.revision);
        const abandoned = new Promise<null>((resolve) => (this.abandonCreation = () => resolve(null)));
        let created: StoreWatch | null;
        try {
          created = await Promise.race([creating, abandoned]);
        } finally {
          this.abandonCreation = null;
        }
        if (created === null) {
          creating.then(
            (w) => w.stop(),
            () => undefined,
          );
          continue;
        }
        this.watch = created;
        if (this.stopped) this.watch.stop();
        for await (const entry of this.watch) {
          this.failures = 0;
          this.apply(entry);
        }
        if (this.recoveryDue) {
          await this.recover();
          continue;
        }
      } catch (e) {
        this.failures++;
        this.deps.log.warn({ err: e, failures: this.failures }, "bucket watch failed");
      }
      if (this.stopped) break;
      // Backoff between recreations: 100 ms doubling to 5 s (cut short by stop()).
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(5000, 100 * 2 ** Math.min(this.failures, 6)));
        t.unref();
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private apply(entry: StoreEntry): void {
    this.delivered = Math.max(this.delivered, entry.revision);
    if (this.recoverAfter !== null && !this.loaded) {
      if (this.recoveryDue) return;
      if (entry.revision > this.recoverAfter) {
        // The rest of the load is the last values of keys written since: recover() replays them.
        if (entry.revision >= this.loadTarget) {
          this.loadEnd = entry.revision;
          this.recoveryDue = true;
          this.watch?.stop();
        }
        return;
      }
    }
    const view = this.deps.view;
    try {
      const key = parseKey(entry.key);
      if (key.kind === "reserved" && !isSubjectClaimKey(entry.key) && !isTrustRootsKey(entry.key)) {
        view.noteRevision(entry.revision);
        this.deps.onReserved(entry);
      } else {
        const events = view.apply(entry, key);
        // Entries of the initial load are history: their events were derived when they happened.
        if ((this.loaded || this.replaying) && events.length > 0) this.deps.onEvents(events);
      }
    } catch (e) {
      // The view checks every record's shape, so this is a bug; yet one entry must not stop the
      // feed: an entry that threw used to end the watch, and when it was the last one of the
      // initial load the view was never marked loaded and the replica never became ready.
      view.noteRevision(entry.revision);
      view.reportUnreadable(entry.key, entry.revision, `applying it failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!this.loaded && view.revision >= this.loadTarget) this.markLoaded();
    this.waiters.reached(view.revision);
  }

  /**
   * Where recovery starts, or null: after the last stored event's revision less one (that
   * entry may have later events of its own), or after the publisher's watermark if later.
   */
  private async recoveryPoint(): Promise<number | null> {
    const { lastStoredRevision, history, log } = this.deps;
    if (!lastStoredRevision) return null;
    let last: number | null;
    try {
      last = await lastStoredRevision();
    } catch (err) {
      log.warn({ err }, "could not read the last stored event; events not stored before this start are not recovered");
      return null;
    }
    // A watermark past the store's revision is from before the store went back: not trusted.
    let watermark = await this.watermark();
    if (watermark !== null && watermark > this.loadTarget) watermark = null;
    // Neither a stored event (a new stream, or all aged out) nor a watermark: no point to continue from.
    if ((last === null || last > this.loadTarget) && watermark === null) return null;
    const after = Math.max(last !== null && last <= this.loadTarget ? last - 1 : 0, watermark ?? 0);
    if (after >= this.loadTarget) return null; // every write's events are stored: a plain load
    if (!history || history.historyDepth < 2) {
      log.warn({ after, revision: this.loadTarget }, "the bucket keeps one value per key: events of writes after the last stored event cannot be recovered if they were not stored");
      return null;
    }
    if (this.loadTarget - after > MAX_RECOVERY_REVISIONS) {
      log.error({ after, revision: this.loadTarget }, "too many writes since the last stored event to recover their events");
      this.deps.onUnrecoverable?.(this.loadTarget - after);
      return null;
    }
    log.info({ after, last_event: last, published_through: watermark, revision: this.loadTarget }, "recovering events of writes after the last stored event");
    return after;
  }

  /** The publisher's watermark; without one (or if it cannot be read), recovery starts at the last event. */
  private async watermark(): Promise<number | null> {
    if (!this.deps.publishedThrough) return null;
    try {
      return await this.deps.publishedThrough();
    } catch (err) {
      this.deps.log.warn({ err }, "could not read the published-through watermark; recovering from the last stored event");
      return null;
    }
  }

  /** Rebuilds the view as of `recoverAfter` and replays the writes since, deriving their events. */
  private async recover(): Promise<void> {
    const after = this.recoverAfter!;
    this.recoveryDue = false;
    this.recoverAfter = null;
    this.recovering = true;
    try {
      await this.recoverAfterRevision(after);
    } finally {
      this.recovering = false;
    }
  }

  /** Reads the writes after `after`, seeds the view with each key's value as of then, and replays them. */
  private async recoverAfterRevision(after: number): Promise<void> {
    let range: StoreEntry[];
    let plan: Awaited<ReturnType<typeof planRecovery>>;
    try {
      range = await this.readRange(after, this.loadEnd);
      plan = await planRecovery(range, after, this.deps.history!);
    } catch (err) {
      // The view holds only part of the load: load it again, without recovery this time.
      this.deps.log.error({ err, after }, "could not read the writes after the last stored event; their events are not recovered");
      this.reloadPending = true;
      return;
    }
    const view = this.deps.view;
    // The replay derives events, and the seeds must find the indexes as the load left them.
    view.endQuietLoad();
    for (const e of plan.seeds) view.seed(e);
    view.noteRevision(after);
    if (plan.unrecoverable.length > 0) {
      this.deps.log.error({ after, keys: plan.unrecoverable.length, sample: plan.unrecoverable.slice(0, 10) }, "events of writes after the last stored event cannot be derived for some keys: their earlier values are no longer kept");
      this.deps.onUnrecoverable?.(plan.unrecoverable.length);
    }
    this.replaying = true;
    try {
      for (const e of range) this.apply(e);
    } finally {
      this.replaying = false;
    }
    this.deps.log.info({ after, through: this.loadEnd, writes: range.length, seeds: plan.seeds.length }, "derived the events of writes after the last stored event");
  }

  /** Every kept entry after `after` up to the first at or beyond `end`, in store order. */
  private async readRange(after: number, end: number): Promise<StoreEntry[]> {
    const watch = await this.deps.store.watch(after);
    const out: StoreEntry[] = [];
    try {
      for await (const e of watch) {
        out.push(e);
        if (e.revision >= end) return out;
      }
    } finally {
      watch.stop();
    }
    throw new Error(`the watch ended at revision ${out.at(-1)?.revision ?? after}, before ${end}`);
  }

  private markLoaded(): void {
    this.deps.view.endQuietLoad();
    this.loadedAt = this.deps.view.revision;
    for (const w of this.loadedWaiters.splice(0)) w();
  }

  private async checkLag(): Promise<void> {
    if (this.stopped || this.recovering) return;
    if (this.abandonCreation !== null) {
      // A watch being created has delivered nothing yet: not a stall, and a restart would only
      // ask the server to position another consumer over every key.
      this.stalledChecks = 0;
      return;
    }
    // What was applied before asking: writes applied while the question is in flight must
    // not look like the store going backwards.
    const applied = this.deps.view.revision;
    let last: number;
    try {
      last = await this.deps.store.lastRevision();
    } catch {
      return; // the store is away; the watch loop and reconnect handling take care of it
    }
    if (last < applied) {
      // The store lost writes we had applied (an unsynced crash; Jepsen on NATS 2.12.1):
      // our view is ahead of the truth, so rebuild it from what the store now holds.
      this.reload(`store revision went back from ${applied} to ${last}`);
      return;
    }
    const lag = Math.max(0, last - applied);
    this.deps.onLag?.(lag);
    // Two checks in a row behind with no progress: a write that just landed is not a stall.
    // Progress is what the watch delivered, applied or skipped for recovery.
    const delivered = this.delivered;
    this.stalledChecks = lag > 0 && applied === this.lastCheckedRevision && delivered === this.lastCheckedDelivered ? this.stalledChecks + 1 : 0;
    this.lastCheckedRevision = applied;
    this.lastCheckedDelivered = delivered;
    if (this.stalledChecks >= 2) {
      this.stalledChecks = 0;
      this.restart(`watch stalled ${lag} revisions behind`);
    }
  }
}
