/**
 * Elects the one replica that evicts and publishes events, through a lease key in the bucket
 * renewed by compare-and-set. No clocks are compared across replicas: a follower takes over
 * when it has seen no renewal for a whole lease period on its own clock, and the holder
 * steps down when it could not renew for most of a period. A brief overlap is harmless:
 * evictions are compare-and-set writes (exactly once regardless), and events are deduplicated
 * by id in the stream.
 *
 * The lease value also carries `published_through`, a store revision through which every
 * event is known to be stored (the holder is the only publisher). A start recovers unstored
 * events only after it (docs/protocol.md section 8), so a restart of a fleet that only
 * heartbeated since its last event reads no key history. It lives in the lease value rather
 * than a key of its own: renewals already write it (no extra write), replicas of an older
 * version ignore the extra field, and a graceful release writes it once more before deleting
 * the key, whose delete marker leaves that value in the key's kept history (a KV delete is
 * not a purge), where the next start reads it. Recovery needs a history of 2 or more anyway.
 */
import { StoreConflictError, type StoreEntry, type StoreHistory, type StoreWriter } from "../../domain/ports.js";
import { LEASE_KEY } from "../../domain/model/records.js";
import type { Liveness } from "../../domain/lifecycle/liveness.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../../kit/logger.js";
import { guarded, guardedInterval } from "../../kit/guarded.js";

export type LeaseListener = { onAcquired(since: number): void; onLost(reason: string): void };

export class EvictorLease {
  private leader = false;
  private leaderSince = 0;
  private lastRenewed = 0;
  /** Last lease entry seen (by the watch or our own write) and when, on our clock. */
  private seen: { revision: number; holder: string | null; liveness: Liveness; at: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** Last watermark known to this replica: it stays true, so a renewal may repeat it. */
  private watermark: number | null = null;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly deps: {
      store: StoreWriter;
      clock: Clock;
      log: Logger;
      holder: string;
      leaseMs: number;
      listener: LeaseListener;
      /**
       * A revision through which every event is stored, or null when not known now (called
       * synchronously when the lease value is built; see published_through above).
       */
      publishedThrough?: () => number | null;
      /**
       * How this replica keeps liveness (REGISTRY_LIVENESS), written into the lease value while
       * it holds the lease: followers answer heartbeats from memory only under a holder that
       * evicts with suspect marks (docs/architecture.md, "Migration and mixed versions").
       */
      liveness?: Liveness;
      /**
       * Whether this replica hears the fleet now (its API connection is up). The lease is
       * renewed on a connection of its own, so it would outlive the API connection: while this
       * says no, it is neither claimed nor renewed, and the holder steps down as when a renewal
       * fails, so a replica that hears no heartbeat leaves eviction to one that does.
       */
      hearing?: () => boolean;
    },
  ) {}

  get isLeader(): boolean {
    return this.leader;
  }

  /** When this replica became the evicting one: the start of its grace window. */
  get since(): number {
    return this.leaderSince;
  }

  get holder(): string | null {
    return this.seen?.holder ?? null;
  }

  /** The current holder's liveness: "store" when nobody holds the lease or the holder's value does not say (an older registry). */
  get holderLiveness(): Liveness {
    return this.seen?.holder ? this.seen.liveness : "store";
  }

  start(): void {
    const period = Math.max(50, Math.floor(this.deps.leaseMs / 3));
    this.timer = guardedInterval(this.deps.log, "lease tick", () => this.tick(), period);
    guarded(this.deps.log, "lease tick", () => this.tick())();
  }

  /** Lease entries from the bucket watch. */
  observe(entry: StoreEntry): void {
    if (this.seen && entry.revision <= this.seen.revision) return;
    const { holder, liveness } = entry.operation === "PUT" ? this.decodeValue(entry.value) : { holder: null, liveness: "store" as const };
    this.seen = { revision: entry.revision, holder, liveness, at: this.deps.clock.now() };
    if (this.leader && holder !== this.deps.holder) this.stepDown(`lease taken by ${holder ?? "nobody"}`);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.leader) this.stepDown("stopping", { routine: true });
  }

  /** Gives the lease up at once (graceful shutdown) so another replica need not wait a period. */
  async release(): Promise<void> {
    const seen = this.seen;
    const wasLeader = this.leader;
    // Read while still leading: stepping down stops the publisher.
    this.noteWatermark();
    await this.stop();
    if (!wasLeader || !seen) return;
    try {
      // The final watermark, kept in the key's history once the delete below lands.
      const revision = await this.write(seen.revision);
      await this.deps.store.remove(LEASE_KEY, revision);
    } catch {
      // Someone already holds it, or the store is away: the lease expires by itself.
    }
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const now = this.deps.clock.now();
      if (this.deps.hearing?.() === false) this.deaf(now);
      else if (this.leader) await this.renew(now);
      else if (this.claimable(now)) await this.claim(now);
    } finally {
      this.busy = false;
    }
  }

  private claimable(now: number): boolean {
    if (!this.seen || this.seen.holder === null) return true;
    if (this.seen.holder === this.deps.holder) return true; // our own lease from before a restart
    return now - this.seen.at >= this.deps.leaseMs;
  }

  private async claim(now: number): Promise<void> {
    const expected = this.seen && this.seen.holder !== null ? this.seen.revision : 0;
    try {
      const revision = await this.write(expected);
      this.seen = { revision, holder: this.deps.holder, liveness: this.ownLiveness, at: now };
      this.leader = true;
      this.leaderSince = now;
      this.lastRenewed = now;
      this.deps.log.info({ revision }, "acquired the evictor lease");
      this.deps.listener.onAcquired(now);
    } catch (e) {
      if (!(e instanceof StoreConflictError)) this.deps.log.debug({ err: e }, "could not claim the evictor lease");
    }
  }

  private async renew(now: number): Promise<void> {
    try {
      const revision = await this.write(this.seen?.revision ?? 0);
      this.seen = { revision, holder: this.deps.holder, liveness: this.ownLiveness, at: now };
      this.lastRenewed = now;
    } catch (e) {
      if (e instanceof StoreConflictError) this.stepDown("lost the lease to another replica");
      // Could not confirm the lease: stop before a follower may take over (after a full period).
      else if (now - this.lastRenewed >= (this.deps.leaseMs * 2) / 3) this.stepDown("could not renew the lease");
    }
  }

  /** Not renewed while deaf: after the same share of a period as a failed renewal, stepped down. */
  private deaf(now: number): void {
    if (this.leader && now - this.lastRenewed >= (this.deps.leaseMs * 2) / 3) this.stepDown("the registry's connection to NATS is down");
  }

  /** `routine`: this replica chose to stop (shutdown), which is worth an info line, not a warning. */
  private stepDown(reason: string, opts: { routine?: boolean } = {}): void {
    if (!this.leader) return;
    this.leader = false;
    if (opts.routine) this.deps.log.info({ reason }, "gave up the evictor lease");
    else this.deps.log.warn({ reason }, "gave up the evictor lease");
    this.deps.listener.onLost(reason);
  }

  private write(expectedRevision: number): Promise<number> {
    this.noteWatermark();
    const record: LeaseRecord = { holder: this.deps.holder, renewed_at: this.deps.clock.now() };
    if (this.watermark !== null) record.published_through = this.watermark;
    if (this.ownLiveness === "memory") record.liveness = "memory";
    return this.deps.store.write(LEASE_KEY, this.encoder.encode(JSON.stringify(record)), expectedRevision);
  }

  private noteWatermark(): void {
    // Replaced, not maxed: a lower one only comes after the store went back (view-feed reload).
    const now = this.deps.publishedThrough?.() ?? null;
    if (now !== null) this.watermark = now;
  }

  private get ownLiveness(): Liveness {
    return this.deps.liveness ?? "store";
  }

  private decodeValue(bytes: Uint8Array): { holder: string | null; liveness: Liveness } {
    try {
      const v = JSON.parse(this.decoder.decode(bytes)) as { holder?: unknown; liveness?: unknown };
      return { holder: typeof v.holder === "string" ? v.holder : null, liveness: v.liveness === "memory" ? "memory" : "store" };
    } catch {
      return { holder: null, liveness: "store" };
    }
  }
}

type LeaseRecord = { holder: string; renewed_at: number; published_through?: number; liveness?: Liveness };

/**
 * The highest `published_through` among the lease values the bucket keeps (its history holds
 * the last ones even after a release deleted the key), or null: none kept, or only values of
 * a version that did not write it. A value that does not parse is skipped.
 */
export async function readPublishedThrough(store: StoreHistory): Promise<number | null> {
  const decoder = new TextDecoder();
  let best: number | null = null;
  for (const e of await store.history(LEASE_KEY)) {
    if (e.operation !== "PUT") continue;
    let mark: unknown;
    try {
      mark = (JSON.parse(decoder.decode(e.value)) as { published_through?: unknown }).published_through;
    } catch {
      continue;
    }
    if (typeof mark === "number" && Number.isSafeInteger(mark) && mark >= 0 && (best === null || mark > best)) best = mark;
  }
  return best;
}
