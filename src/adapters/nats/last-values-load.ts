/**
 * A watch of last values whose initial load is read by a worker thread (last-values-worker.ts),
 * for a replica's start against a large bucket. Once the worker has read every key's last value
 * up to revision R, a watch resumed after R is made in this thread. Once it is up, the
 * bucket's last revision H is read: that watch gives every change after H as it comes, and the
 * worker, whose own consumer has followed the bucket from the start, passes on every change up
 * to H before it stops. Both are needed: a change after R that was overwritten before
 * the resumed watch read it may be gone from the bucket (a key keeps its last `history` values),
 * so only the worker saw it; and the worker stops at H, so that what follows comes from one
 * watch in order. The caller sees what a nats.js watch of last values gives: every key's last
 * value, in revision order, then every change the bucket still held when a consumer read it.
 * That is also all a nats.js watch gives: with history 1, a value overwritten within a
 * consumer's lag is seen by no watch (docs/architecture.md, "Watches and the bucket's history").
 * The work per message is split: the worker does nats.js's, this thread only unpacks and
 * applies (docs/performance.md, "the start's load in a worker thread").
 *
 * A worker that fails or exits early ends the watch with an error, as a broken watch does: the
 * caller resumes from what it applied (view-feed.ts), and `onFailure` lets the store load in
 * this thread from then on.
 */
import type { ConnectOptions } from "../../client/connection.js";
import type { StoreEntry, StoreWatch } from "../../domain/ports.js";
import { moduleWorker } from "../workers/module-worker.js";
import { EntryBatchReader } from "./entry-batch.js";

export type LastValuesJob = {
  connection: ConnectOptions;
  /** The bucket's stream (`KV_<bucket>`) and its subjects' prefix (`$KV.<bucket>.`). */
  stream: string;
  subjectPrefix: string;
  timeoutMs: number;
  batchBytes: number;
  batchesAhead: number;
};
export type FromLoader = { type: "batch"; buffer: ArrayBuffer } | { type: "done"; revision: number } | { type: "closed" } | { type: "failed"; message: string };
/** `stop`: pass on every change up to revision `through`, then end; this thread's watch gives those after. */
export type ToLoader = { type: "credit" } | { type: "stop"; through: number };

export type LastValuesSource = {
  /** A watch of every change after a revision. */
  resume: (afterRevision: number) => Promise<StoreWatch>;
  /** The bucket's last revision. */
  lastRevision: () => Promise<number>;
};

export function loadLastValuesInWorker(job: Omit<LastValuesJob, "batchBytes" | "batchesAhead">, source: LastValuesSource, onFailure: (err: Error) => void): StoreWatch {
  const worker = moduleWorker(import.meta.url, "last-values-worker", { workerData: { ...job, batchBytes: 1 << 20, batchesAhead: 4 } satisfies LastValuesJob });
  worker.unref();
  const batches: ArrayBuffer[] = [];
  /** The worker has sent everything it will send. */
  let finished = false;
  let failure: Error | null = null;
  let stopped = false;
  /** This thread's watch, resumed after the last key's revision; asked for as soon as the load is over. */
  let resumed: StoreWatch | null = null;
  let wake: (() => void) | null = null;
  const signal = (): void => {
    wake?.();
    wake = null;
  };
  const fail = (err: Error): void => {
    if (stopped || failure) return;
    failure = err;
    onFailure(err);
    signal();
  };
  const loaded = async (revision: number): Promise<void> => {
    const watch = await source.resume(revision);
    if (stopped) return watch.stop();
    resumed = watch;
    // Read after the watch is up, so the watch gives every change after it.
    const through = await source.lastRevision();
    if (!stopped) worker.postMessage({ type: "stop", through } satisfies ToLoader);
  };
  const over = (): void => {
    finished = true;
    void worker.terminate();
    signal();
  };
  worker.on("message", (m: FromLoader) => {
    if (m.type === "batch") batches.push(m.buffer);
    else if (m.type === "done") loaded(m.revision).catch((e: unknown) => fail(e instanceof Error ? e : new Error(String(e))));
    else if (m.type === "closed") over();
    else fail(new Error(`the worker thread reading the bucket failed: ${m.message}`));
    signal();
  });
  worker.on("error", (e) => fail(new Error(`the worker thread reading the bucket failed: ${e.message}`)));
  worker.on("exit", (code) => {
    if (!finished) fail(new Error(`the worker thread reading the bucket exited (code ${code}) before it was done`));
  });

  let reader: EntryBatchReader | null = null;
  let after: AsyncIterator<StoreEntry> | null = null;
  /** The last revision given out: the resumed watch repeats what the worker already gave. */
  let given = 0;
  const done = { done: true, value: undefined } as const;
  const next = async (): Promise<IteratorResult<StoreEntry>> => {
    for (;;) {
      if (after) {
        const r = await after.next();
        if (!r.done && r.value.revision <= given) continue;
        if (!r.done) given = r.value.revision;
        return r;
      }
      const entry = reader?.next() ?? null;
      if (entry) {
        given = entry.revision;
        return { done: false, value: entry };
      }
      reader = null;
      if (stopped) return done;
      const buffer = batches.shift();
      if (buffer) {
        if (!finished) worker.postMessage({ type: "credit" } satisfies ToLoader);
        reader = new EntryBatchReader(buffer);
        continue;
      }
      if (failure) throw failure;
      // The worker ends only once told where the resumed watch takes over: from here it gives the rest.
      if (finished && resumed) {
        after = resumed[Symbol.asyncIterator]();
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    void worker.terminate();
    resumed?.stop();
    signal();
  };
  return {
    stop,
    [Symbol.asyncIterator]: () => ({
      next,
      return: async () => {
        stop();
        return done;
      },
    }),
  };
}
