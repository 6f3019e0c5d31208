/**
 * The Store ports on a JetStream KV bucket. Every write is a compare-and-set on the key's
 * last revision (10071 "wrong last sequence" becomes StoreConflictError); timeouts and "no
 * responders" become StoreUnavailableError (a JetStream publish that timed out has an
 * unknown outcome, so callers re-read rather than assume).
 *
 * The bucket is created with allow_direct off: direct gets may be answered by a lagging
 * follower (nats-server#4710, #7281), and the compare-and-set retry path must read what the
 * stream leader holds. Nothing but the registry reads the bucket, so the cost is ours alone.
 */
import { Kvm, type KV, type KvWatchEntry } from "@nats-io/kv";
import { JetStreamApiError, jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { headers, type NatsConnection, type QueuedIterator } from "@nats-io/nats-core";
import { AckedPublisher, PublishRefusedError } from "./acked-publisher.js";
import { loadLastValuesInWorker } from "./last-values-load.js";
import { inRegion } from "./region-streams.js";
import type { ConnectOptions } from "../../client/connection.js";
import { StoreConflictError, StoreFullError, StoreUnavailableError, type RemoveOptions, type Store, type StoreEntry, type StoreHistory, type StoreWatch, type StoreWriter } from "../../domain/ports.js";

const WRONG_LAST_SEQUENCE = 10071;
const EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence";

/** `maxBytes` 0: unlimited. */
/** `region`: regional mode, a new bucket is placed in that region's cluster (region-streams.ts). */
export type BucketSettings = { bucket: string; replicas: number; history: number; maxBytes: number; timeoutMs: number; region?: string | undefined };

/** `history`: the values the bucket really keeps per key (an existing bucket keeps its own). */
export type BucketCheck = { created: boolean; mismatches: string[]; history: number };

/** Opens the bucket, creating it if missing; reports settings that differ from the wanted ones. */
export async function openBucket(js: JetStreamClient, s: BucketSettings): Promise<{ kv: KV; check: BucketCheck }> {
  const kvm = new Kvm(js);
  const mismatches: string[] = [];
  let created = false;
  let history = s.history;
  let kv: KV;
  try {
    kv = await kvm.open(s.bucket);
    const status = await kv.status();
    if (status.replicas !== s.replicas) mismatches.push(`replicas is ${status.replicas}, configured ${s.replicas}`);
    history = status.history;
    if (status.history !== s.history) mismatches.push(`history is ${status.history}, configured ${s.history}`);
    const maxBytes = status.max_bytes > 0 ? status.max_bytes : 0;
    if (maxBytes !== s.maxBytes) mismatches.push(`max_bytes is ${maxBytes || "unlimited"}, configured ${s.maxBytes || "unlimited"}`);
  } catch (e) {
    if (!isStreamNotFound(e)) throw e;
    kv = await kvm.create(s.bucket, {
      replicas: s.replicas,
      history: s.history,
      max_bytes: s.maxBytes > 0 ? s.maxBytes : -1,
      allow_direct: false,
      description: "agent-registry: specs, instances and coordination keys",
      timeout: s.timeoutMs,
      ...(s.region === undefined ? {} : { placement: inRegion(s.region) }),
    });
    created = true;
  }
  return { kv, check: { created, mismatches, history } };
}

/**
 * The least a watch's creation is given. A watch of last values is a consumer the server
 * positions on the last value of every key before it answers: 3-5 s against a million keys on
 * nats-server 2.9.10, and on a busy machine more than the 5 s of any other call. A start
 * that gave up at 5 s asked again, and each try had the server position another consumer
 * (fleet-1m once took 51 s to start, five creations timing out). A server that is away is
 * still noticed at once: the connection's own handling says so.
 */
export const WATCH_CREATE_TIMEOUT_MS = 60_000;

/** An existing bucket, its calls made through a JetStream context that waits `timeoutMs`. */
function openBucketHandle(nc: NatsConnection, bucket: string, timeoutMs: number): Promise<KV> {
  return new Kvm(jetstream(nc, { timeout: timeoutMs })).open(bucket);
}

/** The bucket through a JetStream context that waits WATCH_CREATE_TIMEOUT_MS (or `timeoutMs`, if longer). */
export function openWatchHandle(nc: NatsConnection, bucket: string, timeoutMs: number): Promise<KV> {
  return openBucketHandle(nc, bucket, Math.max(timeoutMs, WATCH_CREATE_TIMEOUT_MS));
}

/**
 * Writes to the bucket (opened, not created) through a connection other than the main one: the
 * evictor lease's, whose renewals must not wait behind the API's traffic (start/stores.ts,
 * openLeaseStore). Reads and watches stay with the main store.
 */
export async function openBucketWriter(nc: NatsConnection, bucket: string, timeoutMs: number): Promise<StoreWriter> {
  return new KvStore(await openBucketHandle(nc, bucket, timeoutMs), { nc, bucket, timeoutMs });
}

/**
 * Updates go out as plain JetStream publishes through an AckedPublisher rather than
 * kv.update(), which is the same wire message at a much higher garbage cost per write
 * (acked-publisher.ts). Their subject is `$KV.<bucket>.<key>`: the registry's own bucket,
 * never a mirror or one behind a JetStream domain.
 */
export type KvWrites = {
  nc: NatsConnection;
  bucket: string;
  timeoutMs: number;
  inboxPrefix?: string;
  history?: number;
  /** Told each write's seconds from its call to its acknowledgement (or failure), this process's event-loop delays included. */
  observeWrite?: (seconds: number) => void;
};

/**
 * A watch of last values over a bucket of at least `minEntries` entries reads them in a worker
 * thread on a connection made with `connection` (last-values-load.ts); a smaller one is read
 * here, where a thread and a connection would cost more than they save.
 */
export type WorkerLoad = { connection: ConnectOptions; minEntries: number };

export class KvStore implements Store, StoreHistory {
  readonly historyDepth: number;
  private readonly observeWrite: ((seconds: number) => void) | undefined;
  private readonly publisher: AckedPublisher;
  private readonly subjectPrefix: string;
  private readonly bucket: string;

  /**
   * `watchKv`: the same bucket through a JetStream context that waits longer for an answer
   * (openWatchHandle), for creating watches of last values. `workerLoad`: see WorkerLoad;
   * dropped after a worker fails, so a start that cannot run one loads here.
   */
  constructor(
    private readonly kv: KV,
    writes: KvWrites,
    private readonly watchKv: KV = kv,
    private workerLoad?: WorkerLoad,
  ) {
    this.publisher = new AckedPublisher(writes.nc, writes.timeoutMs, writes.inboxPrefix);
    this.bucket = writes.bucket;
    this.subjectPrefix = `$KV.${writes.bucket}.`;
    this.historyDepth = writes.history ?? 1;
    this.observeWrite = writes.observeWrite;
  }

  async history(key: string): Promise<StoreEntry[]> {
    try {
      const out: StoreEntry[] = [];
      for await (const e of await this.kv.history({ key })) out.push(toStoreEntry(e));
      return out;
    } catch (e) {
      throw unavailable(`history of ${key}`, e);
    }
  }

  async watchKept(): Promise<StoreWatch> {
    return this.watchFrom({ resumeFromRevision: 1 });
  }

  async get(key: string): Promise<StoreEntry | null> {
    try {
      const e = await this.kv.get(key);
      return e ? toStoreEntry(e) : null;
    } catch (e) {
      throw unavailable(`read of ${key}`, e);
    }
  }

  async lastRevision(): Promise<number> {
    try {
      const status = await this.kv.status();
      return status.streamInfo.state.last_seq;
    } catch (e) {
      throw unavailable("bucket status", e);
    }
  }

  /** Bytes the bucket's stream holds now (for the quota gauge). */
  async bytes(): Promise<number> {
    try {
      return (await this.kv.status()).size;
    } catch (e) {
      throw unavailable("bucket status", e);
    }
  }

  async write(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    const started = this.observeWrite === undefined ? 0 : performance.now();
    try {
      // create() also succeeds over a deleted key (it retries on the delete marker's revision).
      if (expectedRevision === 0) return await this.kv.create(key, value);
      const h = headers();
      h.set(EXPECTED_LAST_SUBJECT_SEQUENCE, String(expectedRevision));
      return (await this.publisher.publish(this.subjectPrefix + key, value, h)).seq;
    } catch (e) {
      if (isWrongLastSequence(e)) throw new StoreConflictError(key, e);
      if (isStoreFull(e)) throw new StoreFullError(key, e);
      throw unavailable(`write of ${key}`, e);
    } finally {
      this.observeWrite?.((performance.now() - started) / 1000);
    }
  }

  async remove(key: string, expectedRevision: number, opts?: RemoveOptions): Promise<void> {
    try {
      // A purge is allowed on a full bucket: it frees what it rolls up (nats-server 2.9 and 2.15).
      if (opts?.purge === true) await this.kv.purge(key, { previousSeq: expectedRevision });
      else await this.kv.delete(key, { previousSeq: expectedRevision });
    } catch (e) {
      if (isWrongLastSequence(e)) throw new StoreConflictError(key, e);
      throw unavailable(`delete of ${key}`, e);
    }
  }

  watch(afterRevision: number): Promise<StoreWatch> {
    return afterRevision > 0 ? this.watchFrom({ resumeFromRevision: afterRevision + 1 }) : this.watchLastValues();
  }

  private async watchLastValues(): Promise<StoreWatch> {
    const load = this.workerLoad;
    if (load === undefined) return this.watchFrom({});
    let entries: number;
    try {
      entries = (await this.kv.status()).values;
    } catch (e) {
      throw unavailable("bucket status", e);
    }
    // An empty bucket never has a last message to say the load is over: never a worker for it.
    if (entries < Math.max(1, load.minEntries)) return this.watchFrom({});
    return loadLastValuesInWorker(
      { connection: load.connection, stream: `KV_${this.bucket}`, subjectPrefix: this.subjectPrefix, timeoutMs: WATCH_CREATE_TIMEOUT_MS },
      { resume: (after) => this.watchFrom({ resumeFromRevision: after + 1 }), lastRevision: () => this.lastRevision() },
      () => (this.workerLoad = undefined),
    );
  }

  /** A watch from a sequence delivers every kept value from there; without one, the last value of each key. */
  private async watchFrom(opts: { resumeFromRevision?: number }): Promise<StoreWatch> {
    let iter: QueuedIterator<KvWatchEntry>;
    try {
      // Only a watch of last values makes the server position a consumer over every key; one
      // that resumes from a revision is quick, and keeps the short timeout that notices a
      // request lost in an outage (a cluster restarting) in seconds.
      iter = await (opts.resumeFromRevision === undefined ? this.watchKv : this.kv).watch(opts);
    } catch (e) {
      throw unavailable("watch", e);
    }
    return {
      stop: () => iter.stop(),
      // Each entry mapped as it passes, not re-yielded by a generator of ours: a second async
      // generator over nats.js's own cost about 0.3 µs an entry, a third of a second in a
      // start against a million keys.
      [Symbol.asyncIterator]: (): AsyncIterator<StoreEntry> => {
        const source = iter[Symbol.asyncIterator]();
        return {
          next: () => source.next().then((r) => (r.done === true ? r : { done: false, value: toStoreEntry(r.value) })),
          return: async (value?: unknown) => {
            iter.stop();
            return { done: true, value };
          },
        };
      },
    };
  }
}

type KvEntryLike = { key: string; revision: number; operation: "PUT" | "DEL" | "PURGE"; value: Uint8Array; created: Date };

/**
 * A store entry whose `created` is read from the message only when asked: nats.js parses it
 * out of the reply subject (a split and a Date per entry), and only entries that cause an
 * event need it, so a plain heartbeat skips the cost (docs/performance.md).
 */
class KvStoreEntry implements StoreEntry {
  readonly key: string;
  readonly revision: number;
  readonly operation: "PUT" | "DEL" | "PURGE";
  readonly value: Uint8Array;

  constructor(private readonly source: KvEntryLike) {
    this.key = source.key;
    this.revision = source.revision;
    this.operation = source.operation;
    this.value = source.value;
  }

  get created(): number {
    return this.source.created.getTime();
  }
}

const toStoreEntry = (e: KvEntryLike): StoreEntry => new KvStoreEntry(e);

function isWrongLastSequence(e: unknown): boolean {
  if (e instanceof JetStreamApiError || e instanceof PublishRefusedError) return e.code === WRONG_LAST_SEQUENCE;
  return e instanceof Error && /wrong last sequence/i.test(e.message);
}

/** JetStream refuses a publish past the stream's max_bytes (discard new, as KV buckets are). */
function isStoreFull(e: unknown): boolean {
  for (let cur = e, depth = 0; cur instanceof Error && depth < 4; cur = cur.cause, depth++) {
    if (/maximum bytes exceeded|resources exceeded|insufficient resources/i.test(cur.message)) return true;
  }
  return false;
}

function isStreamNotFound(e: unknown): boolean {
  return e instanceof Error && /stream not found|bucket not found|not found/i.test(e.message);
}

function unavailable(what: string, e: unknown): StoreUnavailableError {
  return new StoreUnavailableError(`${what} failed: ${e instanceof Error ? e.message : String(e)}`, e);
}
