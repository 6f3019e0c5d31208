/**
 * A watch of last values whose initial load is read by a worker thread (last-values-worker.ts),
 * for a replica's start against a large bucket. Once the worker has read every key's last value
 * up to revision R, a watch resumed after R is made in this thread, and the worker passes on
 * what is written meanwhile until it is up (a key written twice before then would otherwise
 * show only its second value: a bucket keeps one per key). The caller sees what a nats.js
 * watch of last values gives: every key's last value, in revision order, then every change.
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
export type ToLoader = { type: "credit" } | { type: "stop" };

export function loadLastValuesInWorker(job: Omit<LastValuesJob, "batchBytes" | "batchesAhead">, resume: (afterRevision: number) => Promise<StoreWatch>, onFailure: (err: Error) => void): StoreWatch {
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
  const loaded = (revision: number): void => {
    resume(revision).then(
      (watch) => {
        if (stopped) return watch.stop();
        resumed = watch;
        // Up to now the worker's consumer carried the changes; from here this watch carries them too.
        worker.postMessage({ type: "stop" } satisfies ToLoader);
        signal();
      },
      (e: unknown) => fail(e instanceof Error ? e : new Error(String(e))),
    );
  };
  const over = (): void => {
    finished = true;
    void worker.terminate();
    signal();
  };
  worker.on("message", (m: FromLoader) => {
    if (m.type === "batch") batches.push(m.buffer);
    else if (m.type === "done") loaded(m.revision);
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
      // The resumed watch exists only once the load is over, so these two say the worker is done.
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
