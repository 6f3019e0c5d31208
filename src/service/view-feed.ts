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
 */
import type { StoreReader, StoreEntry, StoreWatch } from "../domain/ports.js";
import type { RegistryView } from "../domain/view.js";
import type { StoreEvent } from "../domain/events.js";
import { parseKey } from "../domain/records.js";
import type { Logger } from "./logger.js";

/** Agent types whose schemas are shared per batch (about 10 ms), and how often. */
const SHARE_BATCH = 500;
const SHARE_EVERY_MS = 100;

export type ViewFeedDeps = {
  store: StoreReader;
  view: RegistryView;
  log: Logger;
  /** Events derived from changes after the initial load, in store order. */
  onEvents: (events: StoreEvent[]) => void;
  /** Entries of reserved keys (the evictor lease). */
  onReserved: (entry: StoreEntry) => void;
  onRestart?: (reason: string) => void;
  onLag?: (lag: number) => void;
  checkIntervalMs?: number;
};

export class ViewFeed {
  private watch: StoreWatch | null = null;
  private stopped = false;
  private loadedAt = -1;
  private loadTarget = 0;
  private readonly loadedWaiters: Array<() => void> = [];
  private waiters: Array<{ revision: number; resolve: (ok: boolean) => void; timer: NodeJS.Timeout }> = [];
  private checkTimer: NodeJS.Timeout | null = null;
  private shareTimer: NodeJS.Timeout | null = null;
  private lastCheckedRevision = -1;
  private stalledChecks = 0;
  private failures = 0;
  private reloadPending = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly deps: ViewFeedDeps) {}

  /** True once the view holds everything the store held when the feed started. */
  get loaded(): boolean {
    return this.loadedAt >= 0;
  }

  async start(): Promise<void> {
    this.loadTarget = await this.deps.store.lastRevision();
    if (this.loadTarget === 0) this.markLoaded();
    this.loop = this.run();
    const interval = this.deps.checkIntervalMs ?? 3000;
    this.checkTimer = setInterval(() => void this.checkLag(), interval);
    this.checkTimer.unref();
    // Equal capability schemas are made to share one copy in small batches once loaded, so
    // neither the load nor a request waits for it (RegistryView.shareSchemas).
    this.shareTimer = setInterval(() => {
      if (this.loaded) this.deps.view.shareSchemas(SHARE_BATCH);
    }, SHARE_EVERY_MS);
    this.shareTimer.unref();
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
    this.watch?.stop();
  }

  /** Drops the view and loads it again from the store; events of the reload are not emitted. */
  reload(reason: string): void {
    if (this.stopped) return;
    this.deps.log.error({ reason }, "reloading the view from the store");
    this.reloadPending = true;
    this.watch?.stop();
  }

  /** Waits until the view has applied `revision`; false on timeout. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.deps.view.revision >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        resolve(false);
      }, timeoutMs);
      this.waiters.push({ revision, resolve, timer });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (this.checkTimer) clearInterval(this.checkTimer);
    if (this.shareTimer) clearInterval(this.shareTimer);
    this.watch?.stop();
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
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
        this.watch = await this.deps.store.watch(this.deps.view.revision);
        if (this.stopped) this.watch.stop();
        for await (const entry of this.watch) {
          this.failures = 0;
          this.apply(entry);
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
    const view = this.deps.view;
    const key = parseKey(entry.key);
    if (key.kind === "reserved") {
      view.noteRevision(entry.revision);
      this.deps.onReserved(entry);
    } else {
      const events = view.apply(entry);
      // Entries of the initial load are history: their events were derived when they happened.
      if (this.loaded && events.length > 0) this.deps.onEvents(events);
    }
    if (!this.loaded && view.revision >= this.loadTarget) this.markLoaded();
    if (this.waiters.length > 0) this.resolveWaiters();
  }

  private markLoaded(): void {
    this.loadedAt = this.deps.view.revision;
    for (const w of this.loadedWaiters.splice(0)) w();
  }

  private resolveWaiters(): void {
    const applied = this.deps.view.revision;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.revision <= applied) {
        clearTimeout(w.timer);
        w.resolve(true);
      } else still.push(w);
    }
    this.waiters = still;
  }

  private async checkLag(): Promise<void> {
    if (this.stopped) return;
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
    this.stalledChecks = lag > 0 && applied === this.lastCheckedRevision ? this.stalledChecks + 1 : 0;
    this.lastCheckedRevision = applied;
    if (this.stalledChecks >= 2) {
      this.stalledChecks = 0;
      this.restart(`watch stalled ${lag} revisions behind`);
    }
  }
}
