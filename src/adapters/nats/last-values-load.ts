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
import type { Worker } from "node:worker_threads";
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

const DONE = { done: true, value: undefined } as const;

export function loadLastValuesInWorker(job: Omit<LastValuesJob, "batchBytes" | "batchesAhead">, source: LastValuesSource, onFailure: (err: Error) => void): StoreWatch {
  const worker = moduleWorker(import.meta.url, "last-values-worker", { workerData: { ...job, batchBytes: 1 << 20, batchesAhead: 4 } satisfies LastValuesJob });
  worker.unref();
  const load = new LastValuesLoad(worker, source, onFailure);
  worker.on("message", (m: FromLoader) => load.received(m));
  worker.on("error", (e) => load.fail(new Error(`the worker thread reading the bucket failed: ${e.message}`)));
  worker.on("exit", (code) => load.exited(code));
  return {
    stop: () => load.stop(),
    [Symbol.asyncIterator]: () => ({
      next: () => load.next(),
      return: async () => {
        load.stop();
        return DONE;
      },
    }),
  };
}

/**
 * One load's state: the worker's batches queued as they come (each taken one gives the worker
 * credit for another), then, once the worker has finished and the resumed watch is up, that
 * watch's entries past the last revision given out. `next` waits on `#wake` whenever neither
 * has anything.
 */
class LastValuesLoad {
  readonly #batches: ArrayBuffer[] = [];
  /** The worker has sent everything it will send. */
  #finished = false;
  #failure: Error | null = null;
  #stopped = false;
  /** This thread's watch, resumed after the last key's revision; asked for as soon as the load is over. */
  #resumed: StoreWatch | null = null;
  #wake: (() => void) | null = null;
  #reader: EntryBatchReader | null = null;
  #after: AsyncIterator<StoreEntry> | null = null;
  /** The last revision given out: the resumed watch repeats what the worker already gave. */
  #given = 0;

  readonly #worker: Worker;
  readonly #source: LastValuesSource;
  readonly #onFailure: (err: Error) => void;

  constructor(worker: Worker, source: LastValuesSource, onFailure: (err: Error) => void) {
    this.#worker = worker;
    this.#source = source;
    this.#onFailure = onFailure;
  }

  received(m: FromLoader): void {
    if (m.type === "batch") this.#batches.push(m.buffer);
    else if (m.type === "done") this.#loaded(m.revision).catch((e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))));
    else if (m.type === "closed") this.#over();
    else this.fail(new Error(`the worker thread reading the bucket failed: ${m.message}`));
    this.#signal();
  }

  exited(code: number): void {
    if (!this.#finished) this.fail(new Error(`the worker thread reading the bucket exited (code ${code}) before it was done`));
  }

  fail(err: Error): void {
    if (this.#stopped || this.#failure) return;
    this.#failure = err;
    this.#onFailure(err);
    this.#signal();
  }

  async next(): Promise<IteratorResult<StoreEntry>> {
    for (;;) {
      if (this.#after) {
        const r = await this.#after.next();
        if (!r.done && r.value.revision <= this.#given) continue;
        if (!r.done) this.#given = r.value.revision;
        return r;
      }
      const entry = this.#reader?.next() ?? null;
      if (entry) {
        this.#given = entry.revision;
        return { done: false, value: entry };
      }
      this.#reader = null;
      if (this.#stopped) return DONE;
      const buffer = this.#batches.shift();
      if (buffer) {
        if (!this.#finished) this.#worker.postMessage({ type: "credit" } satisfies ToLoader);
        this.#reader = new EntryBatchReader(buffer);
        continue;
      }
      if (this.#failure) throw this.#failure;
      // The worker ends only once told where the resumed watch takes over: from here it gives the rest.
      if (this.#finished && this.#resumed) {
        this.#after = this.#resumed[Symbol.asyncIterator]();
        continue;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    void this.#worker.terminate();
    this.#resumed?.stop();
    this.#signal();
  }

  #signal(): void {
    this.#wake?.();
    this.#wake = null;
  }

  /** The worker has read every key's last value up to `revision`: resume a watch after it, then tell the worker where that watch takes over. */
  async #loaded(revision: number): Promise<void> {
    const watch = await this.#source.resume(revision);
    if (this.#stopped) return watch.stop();
    this.#resumed = watch;
    // Read after the watch is up, so the watch gives every change after it.
    const through = await this.#source.lastRevision();
    if (!this.#stopped) this.#worker.postMessage({ type: "stop", through } satisfies ToLoader);
  }

  #over(): void {
    this.#finished = true;
    void this.#worker.terminate();
    this.#signal();
  }
}
