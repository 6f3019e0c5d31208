/**
 * Another region's bucket as this region sees it: a KV mirror of it, placed in this region's
 * cluster (docs/architecture.md, "Regions"). nats-server keeps the mirror in step over the
 * gateway, with the source's own sequence numbers, so a remote entry's revision is its home
 * region's revision; through a partition the mirror keeps what it had and stays readable, and
 * after the heal it resumes from its last sequence. Read-only here: the mirror has no subjects,
 * and nothing of this region ever writes another region's entries.
 *
 * nats.js's KV reads a mirror through its own name's subjects, but a mirror's messages keep the
 * source's (`$KV.<source bucket>.<key>`), so the reads here are an ordered consumer and direct
 * stream reads on the mirror stream, filtered by the source's subjects.
 */
import { DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { StoreEntry, StoreReader, StoreWatch } from "../../domain/ports.js";
import { inRegion } from "./region-streams.js";

const OPERATION_HEADER = "KV-Operation";

export type MirrorSettings = {
  /** The remote region's bucket (`<REGISTRY_BUCKET>-<remote>`). */
  source: string;
  /** This region: where the mirror is placed. */
  region: string;
  replicas: number;
  history: number;
  timeoutMs: number;
};

/** The mirror's bucket name: the remote bucket's, then the region that holds the copy. */
export const mirrorBucket = (source: string, region: string): string => `${source}-in-${region}`;

export type MirrorProgress = {
  /** The newest sequence the mirror holds (the remote bucket's revision). */
  lastRevision: number;
  /** Milliseconds since the mirror last heard from its source; null when the server says nothing. */
  sinceContactMs: number | null;
  /** Messages of the source the mirror does not hold yet, as the server last knew. */
  lag: number;
};

export class RegionMirror implements StoreReader {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    readonly stream: string,
    private readonly subjectPrefix: string,
  ) {}

  /** Creates the mirror if missing (a mirror of a bucket not created yet waits for it). */
  static async open(nc: NatsConnection, s: MirrorSettings): Promise<{ mirror: RegionMirror; created: boolean }> {
    const jsm = await jetstreamManager(nc, { timeout: s.timeoutMs });
    const stream = `KV_${mirrorBucket(s.source, s.region)}`;
    let created = false;
    try {
      await jsm.streams.info(stream);
    } catch (e) {
      if (!(e instanceof Error && /stream not found/i.test(e.message))) throw e;
      await jsm.streams.add({
        name: stream,
        mirror: { name: `KV_${s.source}` },
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        discard: DiscardPolicy.Old,
        max_msgs_per_subject: s.history,
        num_replicas: s.replicas,
        placement: inRegion(s.region),
        allow_direct: false,
        mirror_direct: false,
        description: `agent-registry: region ${s.region}'s read-only copy of the bucket ${s.source}`,
      });
      created = true;
    }
    return { mirror: new RegionMirror(nc, jsm, stream, `$KV.${s.source}.`), created };
  }

  async lastRevision(): Promise<number> {
    return (await this.jsm.streams.info(this.stream)).state.last_seq;
  }

  /** How far the mirror is, and how long since it heard from its source. */
  async progress(): Promise<MirrorProgress> {
    const info = await this.jsm.streams.info(this.stream);
    const active = info.mirror?.active;
    return {
      lastRevision: info.state.last_seq,
      // The server reports -1 (or nothing) when it never had contact.
      sinceContactMs: typeof active === "number" && active >= 0 ? active / 1e6 : null,
      lag: info.mirror?.lag ?? 0,
    };
  }

  async get(key: string): Promise<StoreEntry | null> {
    try {
      const m = await this.jsm.streams.getMessage(this.stream, { last_by_subj: this.subjectPrefix + key });
      if (m === null) return null;
      const op = m.header?.get(OPERATION_HEADER);
      return { key, revision: m.seq, operation: op === "DEL" || op === "PURGE" ? op : "PUT", value: m.data, created: m.timestamp ? Date.parse(m.timestamp) : 0 };
    } catch (e) {
      if (e instanceof Error && /no message found/i.test(e.message)) return null;
      throw e;
    }
  }

  async watch(afterRevision: number): Promise<StoreWatch> {
    const js = jetstream(this.nc, { timeout: 60_000 });
    const consumer = await js.consumers.get(this.stream, {
      filter_subjects: [`${this.subjectPrefix}>`],
      ...(afterRevision > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: afterRevision + 1 } : { deliver_policy: DeliverPolicy.LastPerSubject }),
    });
    const messages = await consumer.consume();
    const prefixLength = this.subjectPrefix.length;
    const toEntry = (m: JsMsg): StoreEntry => {
      const op = m.headers?.get(OPERATION_HEADER);
      return { key: m.subject.slice(prefixLength), revision: m.seq, operation: op === "DEL" || op === "PURGE" ? op : "PUT", value: m.data, created: Math.floor(m.info.timestampNanos / 1e6) };
    };
    return {
      stop: () => void messages.stop(),
      [Symbol.asyncIterator]: (): AsyncIterator<StoreEntry> => {
        const source = messages[Symbol.asyncIterator]();
        return {
          next: () => source.next().then((r) => (r.done === true ? r : { done: false, value: toEntry(r.value) })),
          return: async (value?: unknown) => {
            await messages.close();
            return { done: true, value };
          },
        };
      },
    };
  }
}
