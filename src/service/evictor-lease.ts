/**
 * Elects the one replica that evicts and publishes events, through a lease key in the bucket
 * renewed by compare-and-set. No clocks are compared across replicas: a follower takes over
 * when it has seen no renewal for a whole lease period on its own clock, and the holder
 * steps down when it could not renew for most of a period. A brief overlap is harmless:
 * evictions are compare-and-set writes (exactly once regardless), and events are deduplicated
 * by id in the stream.
 */
import { StoreConflictError, type StoreEntry, type StoreWriter } from "../domain/ports.js";
import { LEASE_KEY } from "../domain/records.js";
import type { Clock } from "./clock.js";
import type { Logger } from "./logger.js";

export type LeaseListener = { onAcquired(since: number): void; onLost(reason: string): void };

export class EvictorLease {
  private leader = false;
  private leaderSince = 0;
  private lastRenewed = 0;
  /** Last lease entry seen (by the watch or our own write) and when, on our clock. */
  private seen: { revision: number; holder: string | null; at: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
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

  start(): void {
    const period = Math.max(50, Math.floor(this.deps.leaseMs / 3));
    this.timer = setInterval(() => void this.tick(), period);
    this.timer.unref();
    void this.tick();
  }

  /** Lease entries from the bucket watch. */
  observe(entry: StoreEntry): void {
    if (this.seen && entry.revision <= this.seen.revision) return;
    const holder = entry.operation === "PUT" ? this.decodeHolder(entry.value) : null;
    this.seen = { revision: entry.revision, holder, at: this.deps.clock.now() };
    if (this.leader && holder !== this.deps.holder) this.stepDown(`lease taken by ${holder ?? "nobody"}`);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.leader) this.stepDown("stopping");
  }

  /** Gives the lease up at once (graceful shutdown) so another replica need not wait a period. */
  async release(): Promise<void> {
    const seen = this.seen;
    const wasLeader = this.leader;
    await this.stop();
    if (!wasLeader || !seen) return;
    try {
      await this.deps.store.remove(LEASE_KEY, seen.revision);
    } catch {
      // Someone already holds it, or the store is away: the lease expires by itself.
    }
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const now = this.deps.clock.now();
      if (this.leader) await this.renew(now);
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
      this.seen = { revision, holder: this.deps.holder, at: now };
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
      this.seen = { revision, holder: this.deps.holder, at: now };
      this.lastRenewed = now;
    } catch (e) {
      if (e instanceof StoreConflictError) this.stepDown("lost the lease to another replica");
      // Could not confirm the lease: stop before a follower may take over (after a full period).
      else if (now - this.lastRenewed >= (this.deps.leaseMs * 2) / 3) this.stepDown("could not renew the lease");
    }
  }

  private stepDown(reason: string): void {
    if (!this.leader) return;
    this.leader = false;
    this.deps.log.warn({ reason }, "gave up the evictor lease");
    this.deps.listener.onLost(reason);
  }

  private write(expectedRevision: number): Promise<number> {
    const value = this.encoder.encode(JSON.stringify({ holder: this.deps.holder, renewed_at: this.deps.clock.now() }));
    return this.deps.store.write(LEASE_KEY, value, expectedRevision);
  }

  private decodeHolder(bytes: Uint8Array): string | null {
    try {
      const v = JSON.parse(this.decoder.decode(bytes)) as { holder?: unknown };
      return typeof v.holder === "string" ? v.holder : null;
    } catch {
      return null;
    }
  }
}
