/**
 * The REGISTRY_EVENTS stream: created if missing (settings checked if present), events
 * published with their id (region-qualified in regional mode: `eventKey`) as the JetStream message id (the stream drops a second copy within
 * its duplicate window), and the last stored event's position read back, so a replica that
 * takes over knows where the previous publisher stopped.
 */
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager, type JetStreamManager, RetentionPolicy, StorageType, DiscardPolicy } from "@nats-io/jetstream";
import { AckedPublisher } from "./acked-publisher.js";
import { inRegion, regionEventSubjects, regionStoredSubject } from "./region-streams.js";
import type { CloudEvent } from "../../domain/view/events.js";
import { eventKey } from "../../protocol/events.js";
import type { Subjects } from "../../protocol/subjects.js";

export const REVISION_HEADER = "Registry-Revision";
export const EVENT_INDEX_HEADER = "Registry-Event-Index";
const DUPLICATE_WINDOW_MS = 2 * 60_000;
const MSG_ID_HEADER = "Nats-Msg-Id";
const EXPECTED_LAST_MSG_ID_HEADER = "Nats-Expected-Last-Msg-Id";
const encoder = new TextEncoder();

/**
 * `maxBytes` 0: unlimited (age alone bounds the stream). `region`: regional mode, the stream is
 * placed in that region's cluster and stores events under the region's subjects (region-streams.ts).
 */
export type StreamSettings = { name: string; replicas: number; maxAgeMs: number; maxBytes: number; timeoutMs: number; region?: string };

/** Position of an event in store order: revision, then index within the revision. */
export type EventPosition = { revision: number; index: number };

export class EventStream {
  private constructor(
    private readonly publisher: AckedPublisher,
    private readonly jsm: JetStreamManager,
    private readonly settings: StreamSettings,
  ) {}

  static async open(nc: NatsConnection, subjects: Subjects, s: StreamSettings): Promise<{ stream: EventStream; created: boolean; mismatches: string[] }> {
    const jsm = await jetstreamManager(nc, { timeout: s.timeoutMs });
    const regional = s.region === undefined ? undefined : regionEventSubjects(s.region, subjects.prefix, subjects.storedEvents);
    const wanted = regional?.subjects ?? subjects.storedEvents;
    const mismatches: string[] = [];
    let created = false;
    try {
      const info = await jsm.streams.info(s.name);
      const have = info.config.subjects ?? [];
      const missing = wanted.filter((w) => !have.includes(w));
      if (missing.length > 0) {
        // Subjects are additive and safe to extend; anything else is the operator's call.
        await jsm.streams.update(s.name, { ...info.config, subjects: [...have, ...missing] });
      }
      if (info.config.num_replicas !== s.replicas) mismatches.push(`replicas is ${info.config.num_replicas}, configured ${s.replicas}`);
      const age = Math.round(info.config.max_age / 1e6);
      if (age !== s.maxAgeMs) mismatches.push(`max_age is ${age} ms, configured ${s.maxAgeMs} ms`);
      const maxBytes = info.config.max_bytes > 0 ? info.config.max_bytes : 0;
      if (maxBytes !== s.maxBytes) mismatches.push(`max_bytes is ${maxBytes || "unlimited"}, configured ${s.maxBytes || "unlimited"}`);
    } catch (e) {
      if (!(e instanceof Error && /stream not found/i.test(e.message))) throw e;
      await jsm.streams.add({
        name: s.name,
        subjects: wanted,
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        discard: DiscardPolicy.Old,
        num_replicas: s.replicas,
        max_age: s.maxAgeMs * 1e6,
        max_bytes: s.maxBytes > 0 ? s.maxBytes : -1,
        duplicate_window: Math.min(DUPLICATE_WINDOW_MS, s.maxAgeMs) * 1e6,
        description: "agent-registry: registry events, in store order",
        ...(regional && s.region !== undefined ? { placement: inRegion(s.region), republish: regional.republish } : {}),
      });
      created = true;
    }
    return { stream: new EventStream(new AckedPublisher(nc, s.timeoutMs), jsm, s), created, mismatches };
  }

  /**
   * Stores one event. Nats-Msg-Id (the event id) makes a retry a duplicate rather than a second
   * copy; Nats-Expected-Last-Msg-Id is how the publisher keeps pipelined events in order. Sent
   * through the AckedPublisher, as the store's writes are: a registration burst publishes as many
   * events, and kv/js publish()'s per-call timers were promoted garbage (acked-publisher.ts).
   */
  async publish(subject: string, event: CloudEvent, position: EventPosition | null, expectLastId?: string): Promise<{ duplicate: boolean; seq: number }> {
    const region = this.settings.region;
    const stored = region === undefined ? event : { ...event, region };
    const h = headers();
    h.set(MSG_ID_HEADER, eventKey(stored));
    if (expectLastId !== undefined) h.set(EXPECTED_LAST_MSG_ID_HEADER, eventKey({ id: expectLastId, region }));
    if (position) {
      h.set(REVISION_HEADER, String(position.revision));
      h.set(EVENT_INDEX_HEADER, String(position.index));
    }
    return this.publisher.publish(regionStoredSubject(region, subject), encoder.encode(JSON.stringify(stored)), h);
  }

  /** Position of the newest stored event that came from the store (alerts carry none); null when none. */
  async lastPosition(): Promise<EventPosition | null> {
    const info = await this.jsm.streams.info(this.settings.name);
    const first = info.state.first_seq;
    for (let seq = info.state.last_seq, tries = 0; seq >= first && seq > 0 && tries < 100; seq--, tries++) {
      try {
        const m = await this.jsm.streams.getMessage(this.settings.name, { seq });
        const rev = m?.header.get(REVISION_HEADER);
        if (rev) return { revision: Number(rev), index: Number(m?.header.get(EVENT_INDEX_HEADER) ?? 0) };
      } catch {
        // deleted message: keep walking back
      }
    }
    return null;
  }
}
