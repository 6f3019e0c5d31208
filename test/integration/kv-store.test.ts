/**
 * The KV adapter against a real nats-server: the same store contract as the in-memory double,
 * plus what only a real bucket has (settings of an existing bucket, a value overwritten before a
 * watch reads it, given or not by the bucket's history), and a start's watch of
 * last values read by a worker thread (last-values-load.ts): the store contract holds with it,
 * it gives what the main thread's watch gives and then follows changes as that one does, a stop
 * ends it, and a worker that cannot read ends it with an error after which the store loads in
 * the main thread. The worker itself, driven as last-values-load.ts drives it: told the revision
 * where the main thread's resumed watch takes over, it passes on every change up to that one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { EntryBatchReader } from "../../src/adapters/nats/entry-batch.js";
import { KvStore, openBucket, type WorkerLoad } from "../../src/adapters/nats/kv-store.js";
import type { FromLoader, LastValuesJob, ToLoader } from "../../src/adapters/nats/last-values-load.js";
import { moduleWorker } from "../../src/adapters/workers/module-worker.js";
import { StoreConflictError, StoreFullError, type StoreEntry, type StoreWatch } from "../../src/domain/ports.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { pickFreePort } from "../harness/ports.js";
import { storeContract, storeHistoryContract } from "../unit/store-contract.js";

let server: NatsTestServer;
let nc: NatsConnection;
let js: JetStreamClient;
let counter = 0;
const uniqueBucket = (what: string): string => `${what}-${process.pid}-${Date.now().toString(36)}-${counter++}`;

beforeAll(async () => {
  server = await withNatsServer();
  nc = await connect({ servers: server.url });
  js = jetstream(nc, { timeout: 5000 });
});

afterAll(async () => {
  await nc?.drain();
  await server?.stop();
});

/**
 * The stores the contract runs against keep two values per key. With one, a value overwritten
 * before a watch's consumer has read it is gone from the bucket, and no watch gives it (see
 * "what a watch gives depends on the bucket's history" below): the contract's watch tests,
 * which overwrite a key at once, then failed about one round in 300 on a loaded machine with
 * nats.js's own watch, and one in 50 with the worker's load. The registry's default is 4.
 */
const CONTRACT_HISTORY = 2;

/** A store on a bucket of its own, its last values read by a worker thread when `workerLoad` says so. */
async function store(workerLoad?: WorkerLoad, history = CONTRACT_HISTORY): Promise<KvStore> {
  const bucket = uniqueBucket(`store-h${history}`);
  const { kv } = await openBucket(js, { bucket, replicas: 1, history, maxBytes: 0, timeoutMs: 5000 });
  return new KvStore(kv, { nc, bucket, timeoutMs: 5000, history }, kv, workerLoad);
}

storeContract("KvStore", () => store());
storeHistoryContract("KvStore", async () => {
  const bucket = uniqueBucket("history");
  const { kv, check } = await openBucket(js, { bucket, replicas: 1, history: 3, maxBytes: 0, timeoutMs: 5000 });
  return new KvStore(kv, { nc, bucket, timeoutMs: 5000, history: check.history });
});

describe("openBucket", () => {
  it("creates a missing bucket with direct gets off and reports no mismatch", async () => {
    const bucket = uniqueBucket("open");
    const first = await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    expect(first.check).toEqual({ created: true, mismatches: [], history: 1 });
    const info = await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`);
    expect(info.config.allow_direct).toBe(false);
    const again = await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    expect(again.check).toEqual({ created: false, mismatches: [], history: 1 });
  });

  it("reports settings of an existing bucket that differ from the configured ones", async () => {
    const bucket = uniqueBucket("mismatch");
    await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    const reopened = await openBucket(js, { bucket, replicas: 3, history: 5, maxBytes: 4096, timeoutMs: 5000 });
    expect(reopened.check.created).toBe(false);
    expect(reopened.check.mismatches).toEqual(["replicas is 1, configured 3", "history is 1, configured 5", "max_bytes is unlimited, configured 4096"]);
  });

  it("refuses a write to a full bucket with StoreFullError, writing nothing", async () => {
    const bucket = uniqueBucket("full");
    const store = new KvStore((await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 4096, timeoutMs: 5000 })).kv, { nc, bucket, timeoutMs: 5000 });
    const big = new Uint8Array(1000).fill(65);
    let refused: unknown;
    const written: string[] = [];
    for (let i = 0; i < 20 && refused === undefined; i++) {
      try {
        await store.write(`agents.t${i}`, big, 0);
        written.push(`agents.t${i}`);
      } catch (e) {
        refused = e;
      }
    }
    expect(refused).toBeInstanceOf(StoreFullError);
    expect(written.length).toBeGreaterThan(0);
    expect(await store.get(`agents.t${written.length}`)).toBeNull();
  });

  it("tells observeWrite each write's duration, a refused compare-and-set's included, and nothing for reads", async () => {
    const bucket = uniqueBucket("observed");
    const seconds: number[] = [];
    const { kv } = await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    const observed = new KvStore(kv, { nc, bucket, timeoutMs: 5000, observeWrite: (s) => seconds.push(s) });
    const rev = await observed.write("agents.alpha", enc.encode("x"), 0);
    await observed.write("agents.alpha", enc.encode("y"), rev);
    await expect(observed.write("agents.alpha", enc.encode("z"), rev)).rejects.toBeInstanceOf(StoreConflictError);
    await observed.get("agents.alpha");
    expect(seconds).toHaveLength(3);
    // A round trip to a local server: more than nothing, far less than the write's timeout.
    for (const s of seconds) expect(s).toBeGreaterThan(0);
    for (const s of seconds) expect(s).toBeLessThan(5);
  });

  it("gives a store on the existing bucket that sees the data already there", async () => {
    const bucket = uniqueBucket("reopen");
    const a = new KvStore((await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 })).kv, { nc, bucket, timeoutMs: 5000 });
    const rev = await a.write("agents.alpha", new TextEncoder().encode("x"), 0);
    const b = new KvStore((await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 })).kv, { nc, bucket, timeoutMs: 5000 });
    expect(await b.get("agents.alpha")).toMatchObject({ revision: rev, operation: "PUT" });
    await expect(b.write("agents.alpha", new TextEncoder().encode("y"), 0)).rejects.toBeInstanceOf(StoreConflictError);
  });
});

const enc = new TextEncoder();
const dec = new TextDecoder();

const inWorker = (): WorkerLoad => ({ connection: { servers: server.url, name: "last-values-test" }, minEntries: 1 });

/**
 * Entries from a watch until one at `revision` or later, as plain data. Read through the
 * iterator, not for-await: a break out of that would stop the watch.
 */
async function until(watch: StoreWatch | AsyncIterator<StoreEntry>, revision: number): Promise<Array<Omit<StoreEntry, "value"> & { value: string }>> {
  const it = Symbol.asyncIterator in watch ? watch[Symbol.asyncIterator]() : watch;
  const out = [];
  for (let r = await it.next(); !r.done; r = await it.next()) {
    const e = r.value;
    // A long value by its length and its end, so a failure prints something readable.
    const value = e.value.length > 100 ? `${e.value.length} bytes ending ${dec.decode(e.value.subarray(-20))}` : dec.decode(e.value);
    out.push({ key: e.key, revision: e.revision, operation: e.operation, value, created: e.created });
    if (e.revision >= revision) break;
  }
  return out;
}

storeContract("KvStore, last values read by a worker thread", () => store(inWorker()));

describe("a watch of last values read by a worker thread", () => {
  it("gives every key's last value as the main thread's watch does, then the changes after", async () => {
    const s = await store(inWorker());
    // Keys written once, rewritten, deleted and purged, and values of every size up to 200 KB.
    let last = 0;
    for (let i = 0; i < 3000; i++) last = await s.write(`instances.t${i % 30}.i${i}`, enc.encode(`v${i}`.repeat(1 + (i % 7))), 0);
    for (let i = 0; i < 3000; i += 10) {
      const current = (await s.get(`instances.t${i % 30}.i${i}`))!;
      last = await s.write(current.key, enc.encode(`again${i}`), current.revision);
    }
    for (let i = 1; i < 3000; i += 97) {
      const current = (await s.get(`instances.t${i % 30}.i${i}`))!;
      await s.remove(current.key, current.revision);
    }
    await js.publish(`$KV.${(s as unknown as { bucket: string }).bucket}.agents.big`, enc.encode("x".repeat(200_000)));
    last = await s.lastRevision();

    const plain = new KvStore((s as unknown as { kv: never }).kv, { nc, bucket: (s as unknown as { bucket: string }).bucket, timeoutMs: 5000 });
    const expected = await until(await plain.watch(0), last);
    const watch = await s.watch(0);
    const it = watch[Symbol.asyncIterator]();
    const got = await until(it, last);
    expect(got.length).toBe(expected.length);
    expect(got).toEqual(expected);
    expect(got.filter((e) => e.operation === "DEL").length).toBeGreaterThan(20);

    // The same watch goes on with what is written after the load.
    const later = await s.write("agents.later", enc.encode("after the load"), 0);
    const rest = await until(it, later);
    expect(rest).toEqual([expect.objectContaining({ key: "agents.later", revision: later, operation: "PUT", value: "after the load" })]);
    watch.stop();
  });

  it("ends when stopped in the middle of the load", async () => {
    const s = await store(inWorker());
    for (let i = 0; i < 500; i++) await s.write(`instances.t.i${i}`, enc.encode(`v${i}`), 0);
    const watch = await s.watch(0);
    const it = watch[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    watch.stop();
    let more = 0;
    while (!(await it.next()).done) more++;
    // What was already unpacked may still come out; the rest does not.
    expect(more).toBeLessThan(500);
  });

  it("ends with an error when the worker cannot read, and the store loads in the main thread after", async () => {
    const s = await store({ connection: { servers: `nats://127.0.0.1:${await pickFreePort()}`, timeoutMs: 1000 }, minEntries: 1 });
    for (let i = 0; i < 50; i++) await s.write(`instances.t.i${i}`, enc.encode(`v${i}`), 0);
    const last = await s.lastRevision();
    await expect(until(await s.watch(0), last)).rejects.toThrow(/the worker thread reading the bucket failed/);
    const again = await until(await s.watch(0), last);
    expect(again).toHaveLength(50);
  });
});

describe("what a watch gives depends on the bucket's history", () => {
  /** A key written and then deleted, and a watch from the write, made after both. */
  async function overwrittenBeforeTheWatch(history: number): Promise<Array<[string, string]>> {
    const s = await store(undefined, history);
    const before = await s.write("k.before", enc.encode("x"), 0);
    const d1 = await s.write("k.d", enc.encode("d1"), 0);
    await s.remove("k.d", d1);
    const seen = await until(await s.watch(before), await s.lastRevision());
    return seen.map((e) => [e.operation, e.value]);
  }

  // What a watch's consumer reads at a lag behind the writes, the way a new watch or one on a
  // busy server does: with one value per key, the write is gone once the delete is stored.
  it("with history 1, a value overwritten before the watch reads it is never given", async () => {
    expect(await overwrittenBeforeTheWatch(1)).toEqual([["DEL", ""]]);
  });

  it("with history 2, the same watch gives the value and then its delete", async () => {
    expect(await overwrittenBeforeTheWatch(2)).toEqual([
      ["PUT", "d1"],
      ["DEL", ""],
    ]);
  });
});

describe("the load worker's handover to the main thread's watch", () => {
  /** The worker on a store's bucket, and what it sends, as the main thread would take it. */
  function startWorker(s: KvStore) {
    const bucket = (s as unknown as { bucket: string }).bucket;
    const job: LastValuesJob = { connection: { servers: server.url, name: "handover-test" }, stream: `KV_${bucket}`, subjectPrefix: `$KV.${bucket}.`, timeoutMs: 5000, batchBytes: 1 << 20, batchesAhead: 4 };
    const worker = moduleWorker(new URL("../../src/adapters/nats/last-values-worker.ts", import.meta.url).href, "last-values-worker", { workerData: job });
    const entries: Array<[string, number]> = [];
    let resolveDone: (revision: number) => void = () => {};
    const done = new Promise<number>((resolve) => (resolveDone = resolve));
    const closed = new Promise<void>((resolve, reject) => {
      worker.on("message", (m: FromLoader) => {
        if (m.type === "batch") {
          const reader = new EntryBatchReader(m.buffer);
          for (let e = reader.next(); e; e = reader.next()) entries.push([e.key, e.revision]);
          worker.postMessage({ type: "credit" } satisfies ToLoader);
        } else if (m.type === "done") resolveDone(m.revision);
        else if (m.type === "closed") resolve();
        else reject(new Error(m.message));
      });
      worker.on("error", reject);
    });
    return { worker, entries, done, closed };
  }

  it("passes on every change up to the revision it is told, waiting for those not yet written, and ends there", async () => {
    const s = await store();
    for (let i = 0; i < 5; i++) await s.write(`agents.t${i}`, enc.encode(`v${i}`), 0);
    const { worker, entries, done, closed } = startWorker(s);
    try {
      const loaded = await done;
      expect(entries.map(([, revision]) => revision)).toEqual([1, 2, 3, 4, 5]);
      // Told before the changes are written: the worker must wait for them, not end at once.
      worker.postMessage({ type: "stop", through: loaded + 2 } satisfies ToLoader);
      // (Not followed by a third: one written before the worker takes in the stop is passed on
      // as well, and the main thread drops it, its own watch having it too.)
      const x = await s.write("agents.x", enc.encode("x"), 0);
      const y = await s.write("agents.y", enc.encode("y"), 0);
      await closed;
      expect(entries.slice(5)).toEqual([
        ["agents.x", x],
        ["agents.y", y],
      ]);
    } finally {
      await worker.terminate();
    }
  });

  it("ends at once when told a revision it has already passed on", async () => {
    const s = await store();
    for (let i = 0; i < 3; i++) await s.write(`agents.t${i}`, enc.encode(`v${i}`), 0);
    const { worker, entries, done, closed } = startWorker(s);
    try {
      worker.postMessage({ type: "stop", through: await done } satisfies ToLoader);
      await closed;
      expect(entries).toHaveLength(3);
    } finally {
      await worker.terminate();
    }
  });
});
