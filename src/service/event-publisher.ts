/**
 * Publishes the events derived from the store's change log, exactly once per transition and
 * in store order. Every replica derives every event (view-feed.ts) and keeps the ones not yet
 * known to be stored; only the replica holding the evictor lease publishes. When it takes
 * over, it reads the position of the last stored event and publishes what follows it, so
 * events of a publisher that died mid-way are neither lost nor repeated (and the stream's
 * deduplication by id covers the overlap of two publishers during a lease handover).
 */
import type { StoreEvent, CloudEvent } from "../domain/events.js";
import { eventId, storeEventToCloudEvent } from "../domain/events.js";
import type { Logger } from "./logger.js";

export type EventSink = {
  /**
   * Stores one event. With `expectLastId`, the stream refuses it unless the last event it
   * stored has that id (a duplicate is still answered as a duplicate: ids are checked first).
   */
  publish(
    subject: string,
    event: CloudEvent,
    position: { revision: number; index: number } | null,
    expectLastId?: string,
  ): Promise<{ duplicate: boolean }>;
  lastPosition(): Promise<{ revision: number; index: number } | null>;
};

/** Events kept by a follower; beyond this the oldest go (and a warning says so). */
const MAX_PENDING = 200_000;
const PRUNE_EVERY_MS = 5_000;
/** Most publishes in flight at once; the window starts at 1 and doubles while all succeed. */
const MAX_WINDOW = 128;

export type PublisherHooks = { onPublished?: (e: StoreEvent, latencyMs: number) => void; onFailure?: (err: unknown) => void };

export class EventPublisher {
  private pending: StoreEvent[] = [];
  private leader = false;
  private pumping: Promise<void> | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private dropped = 0;
  private window = 1;

  constructor(
    private readonly deps: {
      sink: EventSink;
      subjectOf: (e: StoreEvent) => string;
      log: Logger;
      now: () => number;
      hooks?: PublisherHooks;
    },
  ) {}

  start(): void {
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  get backlog(): number {
    return this.pending.length;
  }

  /** Derived events, in store order. */
  enqueue(events: StoreEvent[]): void {
    this.pending.push(...events);
    if (this.pending.length > MAX_PENDING) {
      const excess = this.pending.length - MAX_PENDING;
      this.pending.splice(0, excess);
      this.dropped += excess;
      this.deps.log.warn({ dropped: this.dropped }, "event backlog over its bound; oldest unpublished events dropped");
    }
    if (this.leader) this.pump();
  }

  /** This replica now publishes: skip what the stream already has, then publish the rest. */
  async becomeLeader(): Promise<void> {
    // Prune as a follower first: were we leader already, an enqueue during the read would
    // start publishing the whole backlog (only the stream's duplicate window would save it).
    await this.prune();
    this.leader = true;
    this.pump();
  }

  stepDown(): void {
    this.leader = false;
  }

  /** Waits until the backlog is published (or publishing stops); for shutdown and tests. */
  async flush(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.pumping;
  }

  private pump(): void {
    if (this.pumping || this.stopped) return;
    this.pumping = this.drain().finally(() => {
      this.pumping = null;
      if (this.leader && this.pending.length > 0 && !this.stopped) this.pump();
    });
  }

  /**
   * Publishes the head of the backlog, up to `window` events in flight. One publish at a time
   * (a round trip each) stored fewer than 1,000 events/s, so a burst of registrations left a
   * backlog that took minutes to drain (docs/performance.md). Order still holds: each publish
   * of a batch expects the previous one's id to be the stream's last, so when one fails every
   * later one in the batch is refused too, and nothing is stored ahead of an earlier event.
   * A retry of an event that was stored after all comes back as a duplicate. After a failure
   * the window starts again from one event, so a stream that is away is probed, not flooded.
   */
  private async drain(): Promise<void> {
    let failures = 0;
    while (this.leader && !this.stopped && this.pending.length > 0) {
      const batch = this.pending.slice(0, this.window);
      const results = await Promise.allSettled(
        batch.map((e, i) =>
          this.deps.sink.publish(this.deps.subjectOf(e), storeEventToCloudEvent(e), { revision: e.revision, index: e.index }, i === 0 ? undefined : eventId(batch[i - 1]!.revision, batch[i - 1]!.index)),
        ),
      );
      let done = 0;
      while (done < results.length && results[done]!.status === "fulfilled") done++;
      // Only the stored prefix leaves the backlog; prune() never runs while this pumps.
      for (const e of this.pending.splice(0, done)) this.deps.hooks?.onPublished?.(e, this.deps.now() - e.time);
      if (done === batch.length) {
        failures = 0;
        this.window = Math.min(MAX_WINDOW, this.window * 2);
        continue;
      }
      const err = (results[done] as PromiseRejectedResult).reason as unknown;
      failures++;
      this.window = 1;
      this.deps.hooks?.onFailure?.(err);
      this.deps.log.warn({ err, failures, backlog: this.pending.length }, "event publish failed; retrying");
      await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** Math.min(failures, 6))).unref());
    }
  }

  /** Drops pending events that the stream already holds (published by whoever leads). */
  private async prune(): Promise<void> {
    if (this.pending.length === 0 || this.stopped) return;
    let last: { revision: number; index: number } | null;
    try {
      last = await this.deps.sink.lastPosition();
    } catch (err) {
      this.deps.log.debug({ err }, "could not read the last stored event");
      return;
    }
    if (!last) return;
    const stored = last;
    // The publisher may be mid-way through the head; only drop what is certainly stored.
    if (this.pumping) return;
    this.pending = this.pending.filter((e) => e.revision > stored.revision || (e.revision === stored.revision && e.index > stored.index));
  }
}
