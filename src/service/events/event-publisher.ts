/**
 * Publishes the events derived from the store's change log, exactly once per transition and
 * in store order. Every replica derives every event (view-feed.ts) and keeps the ones not yet
 * known to be stored; only the replica holding the evictor lease publishes. When it takes
 * over, it reads the position of the last stored event and publishes what follows it, so
 * events of a publisher that died mid-way are neither lost nor repeated (and the stream's
 * deduplication by id covers the overlap of two publishers during a lease handover).
 *
 * It also builds the events no store transition causes: alerts (stored, with an id of their
 * own) and heartbeat events (core NATS only, never stored).
 */
import type { StoreEvent, CloudEvent } from "../../domain/view/events.js";
import { eventId, storeEventToCloudEvent } from "../../domain/view/events.js";
import { EventType, heartbeatEventJson, toCloudEvent, type HeartbeatData, type SelfPreservationData } from "../../protocol/events.js";
import type { InstanceStatus } from "../../protocol/states.js";
import type { Subjects } from "../../protocol/subjects.js";
import type { Logger } from "../../kit/logger.js";
import { guardedInterval } from "../../kit/guarded.js";

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
  /** Revision of the first event dropped from the backlog unstored, if any (never reset). */
  private firstDropped: number | null = null;
  private window = 1;

  constructor(
    private readonly deps: {
      sink: EventSink;
      subjects: Pick<Subjects, "event" | "alert">;
      log: Logger;
      now: () => number;
      /** Publishes an event's JSON on core NATS (heartbeat events); absent: heartbeat events are off. */
      announce?: (subject: string, json: string) => void;
      /** This replica's name: alerts' ids are built from it, as no store revision caused them. */
      replica?: string;
      hooks?: PublisherHooks;
    },
  ) {}

  /** A heartbeat event (PROTOCOL.md section 5): core NATS only, so a lost one is never missed. */
  heartbeat(agentType: string, instanceId: string, status: InstanceStatus, activeTasks: number | undefined): void {
    if (!this.deps.announce) return;
    const now = this.deps.now();
    const data: HeartbeatData = { agent_type: agentType, instance_id: instanceId, status, active_tasks: activeTasks ?? null };
    this.deps.announce(this.deps.subjects.event(EventType.AgentHeartbeat, agentType), heartbeatEventJson(`hb-${agentType}-${instanceId}-${now}`, data, now));
  }

  /** The self-preservation alert, stored; a failure is logged (the metric still says it). */
  async selfPreservationAlert(data: SelfPreservationData): Promise<void> {
    const now = this.deps.now();
    const type = EventType.SelfPreservationAlert;
    const event = toCloudEvent(type, `alert-${this.deps.replica ?? "registry"}-${now}`, "self_preservation", data, now);
    try {
      await this.deps.sink.publish(this.deps.subjects.alert(type), event, null);
    } catch (err) {
      this.deps.log.warn({ err }, "could not publish the self-preservation alert");
    }
  }

  start(): void {
    this.pruneTimer = guardedInterval(this.deps.log, "event backlog prune", () => this.prune(), PRUNE_EVERY_MS);
  }

  get backlog(): number {
    return this.pending.length;
  }

  /**
   * A store revision through which every derived event is stored, given `applied`, the
   * revision the view has applied now; null while any is still pending. The feed enqueues an
   * entry's events synchronously as the view applies it, and an event leaves the backlog only
   * once stored (a publish answered, or the stream's last position at or past it), so an empty
   * backlog at this moment covers every entry up to `applied`; an event dropped over the bound
   * was never stored, so the revision stays below it.
   */
  storedThrough(applied: number): number | null {
    if (this.pending.length > 0) return null;
    return this.firstDropped === null ? applied : Math.min(applied, this.firstDropped - 1);
  }

  /** Derived events, in store order. */
  enqueue(events: readonly StoreEvent[]): void {
    this.pending.push(...events);
    if (this.pending.length > MAX_PENDING) {
      const excess = this.pending.length - MAX_PENDING;
      const first = this.pending[0]!.revision;
      if (this.firstDropped === null || first < this.firstDropped) this.firstDropped = first;
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
    // drain() catches publish failures; anything else it throws is logged, never left
    // unhandled (that would end the process), and not retried in a loop: the next change pumps.
    let failed = false;
    this.pumping = this.drain()
      .catch((err: unknown) => {
        failed = true;
        this.deps.log.error({ err, backlog: this.pending.length }, "event publishing failed; it resumes with the next change");
      })
      .finally(() => {
        this.pumping = null;
        if (!failed && this.leader && this.pending.length > 0 && !this.stopped) this.pump();
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
          this.deps.sink.publish(this.deps.subjects.event(e.type, e.subject), storeEventToCloudEvent(e), { revision: e.revision, index: e.index }, i === 0 ? undefined : eventId(batch[i - 1]!.revision, batch[i - 1]!.index)),
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
