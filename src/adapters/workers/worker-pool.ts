/**
 * A small pool of worker threads for CPU-bound jobs that must not run on the event loop that
 * answers queries (schema compilation: up to a second per spec). Bounded everywhere: a few
 * workers, a queue that refuses past its bound (PoolBusyError, which callers turn into a
 * structured 503), a timeout per job after which the worker is terminated and replaced (a
 * job cannot hold a worker forever), a replacement for a worker that crashes, and idle
 * workers stopped after a while (an idle registry keeps no thread). `close()` terminates them
 * all and refuses what is still waiting.
 *
 * The wire between the two sides is `{ id, input }` one way and `{ id, output }` or
 * `{ id, error }` back; a worker posts `{ ready: true }` once loaded (serveJobs below). A worker
 * gets one job at a time, so a timeout or a crash concerns exactly one job.
 */
import { parentPort, type Worker } from "node:worker_threads";

export class PoolBusyError extends Error {
  constructor(readonly queued: number, readonly limit: number) {
    super(`${queued} jobs are waiting for a worker; the limit is ${limit}`);
    this.name = "PoolBusyError";
  }
}
export class PoolClosedError extends Error {
  constructor() {
    super("the worker pool is closed");
    this.name = "PoolClosedError";
  }
}
/**
 * The job ran past its time, or its worker died under it (the worker was replaced either way),
 * or no worker could start (`boot`: a broken install, not the job's fault).
 */
export class JobFailedError extends Error {
  constructor(readonly reason: LostReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "JobFailedError";
  }
}

export type WorkerPoolOptions = {
  readonly size: number;
  /** Jobs that may wait for a worker; more are refused at once. */
  readonly maxQueue: number;
  readonly timeoutMs: number;
  /** A worker with nothing to do for this long is terminated (the next job starts one). */
  readonly idleMs: number;
  readonly spawn: () => Worker;
  /** Told when a worker was terminated for a timeout or died (a metric, a log line). */
  readonly onWorkerLost?: (reason: LostReason, err?: unknown) => void;
};

export type LostReason = "timeout" | "crash" | "boot";

type Job<In, Out> = { id: number; input: In; resolve: (out: Out) => void; reject: (err: unknown) => void };
type Slot<In, Out> = { worker: Worker; ready: boolean; job: Job<In, Out> | null; timer: NodeJS.Timeout | null; idle: NodeJS.Timeout | null; gone: boolean };
type Reply<Out> = { ready: true } | { id: number; output: Out } | { id: number; error: string };

export class WorkerPool<In, Out> {
  private readonly slots = new Set<Slot<In, Out>>();
  private readonly queue: Array<Job<In, Out>> = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: WorkerPoolOptions) {}

  /** Jobs waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** How many more jobs run() would take now. */
  get freeSlots(): number {
    return this.closed ? 0 : this.opts.maxQueue - this.queue.length;
  }

  run(input: In): Promise<Out> {
    if (this.closed) return Promise.reject(new PoolClosedError());
    if (this.queue.length >= this.opts.maxQueue) return Promise.reject(new PoolBusyError(this.queue.length, this.opts.maxQueue));
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, input, resolve, reject });
      this.dispatch();
    });
  }

  /** Terminates every worker; jobs waiting or running are refused with PoolClosedError. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new PoolClosedError());
    const exits = [...this.slots].map((slot) => {
      slot.job?.reject(new PoolClosedError());
      slot.job = null;
      return this.retire(slot);
    });
    await Promise.all(exits);
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.ready && !slot.job) this.start(slot, this.queue.shift()!);
    }
    // Start workers for what is still waiting (each takes a job once it reports ready).
    const booting = [...this.slots].filter((s) => !s.ready).length;
    for (let n = Math.min(this.queue.length - booting, this.opts.size - this.slots.size); n > 0; n--) this.add();
  }

  private start(slot: Slot<In, Out>, job: Job<In, Out>): void {
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = null;
    slot.job = job;
    slot.timer = setTimeout(() => this.lose(slot, "timeout", new JobFailedError("timeout", `the job ran longer than ${this.opts.timeoutMs} ms; its worker was stopped`)), this.opts.timeoutMs);
    slot.worker.postMessage({ id: job.id, input: job.input });
  }

  private add(): void {
    const worker = this.opts.spawn();
    worker.unref(); // a pool nobody closed must not keep the process alive
    const slot: Slot<In, Out> = { worker, ready: false, job: null, timer: null, idle: null, gone: false };
    this.slots.add(slot);
    worker.on("message", (msg: Reply<Out>) => this.reply(slot, msg));
    worker.on("error", (err) => this.lose(slot, "crash", new JobFailedError("crash", `the worker failed: ${err.message}`, { cause: err })));
    worker.on("exit", (code) => this.lose(slot, "crash", new JobFailedError("crash", `the worker exited with code ${code}`)));
  }

  private reply(slot: Slot<In, Out>, msg: Reply<Out>): void {
    if (slot.gone) return;
    if ("ready" in msg) {
      slot.ready = true;
    } else if (slot.job && msg.id === slot.job.id) {
      const job = slot.job;
      clearTimeout(slot.timer!);
      slot.job = null;
      slot.timer = null;
      if ("error" in msg) job.reject(new Error(msg.error));
      else job.resolve(msg.output);
    }
    if (!slot.job && !this.closed) {
      slot.idle ??= setTimeout(() => void this.retire(slot), this.opts.idleMs).unref();
    }
    this.dispatch();
  }

  /**
   * A worker timed out or died: its job fails, it is terminated, and what waits gets a new
   * one. A worker that dies while loading fails every waiting job (a broken worker file would
   * otherwise be restarted forever); the next run() tries a new one.
   */
  private lose(slot: Slot<In, Out>, reason: "timeout" | "crash", err: JobFailedError): void {
    if (slot.gone) return;
    const job = slot.job;
    slot.job = null;
    void this.retire(slot);
    if (this.closed) return;
    if (!slot.ready) {
      const failed = new JobFailedError("boot", `no worker could start: ${err.message}`, { cause: err.cause ?? err });
      this.opts.onWorkerLost?.("boot", failed.cause);
      for (const waiting of this.queue.splice(0)) waiting.reject(failed);
      return;
    }
    this.opts.onWorkerLost?.(reason, err.cause ?? err);
    job?.reject(err);
    this.dispatch();
  }

  private async retire(slot: Slot<In, Out>): Promise<void> {
    if (slot.gone) return;
    slot.gone = true;
    this.slots.delete(slot);
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.idle) clearTimeout(slot.idle);
    await slot.worker.terminate();
  }
}

/**
 * The worker's side: answers each `{ id, input }` with `handle(input)`, one at a time, and
 * says it is ready. A handler that throws answers `{ id, error }`.
 */
export function serveJobs<In, Out>(handle: (input: In) => Out): void {
  const port = parentPort;
  if (!port) throw new Error("serveJobs runs in a worker thread");
  port.on("message", ({ id, input }: { id: number; input: In }) => {
    try {
      port.postMessage({ id, output: handle(input) });
    } catch (e) {
      port.postMessage({ id, error: e instanceof Error ? e.message : String(e) });
    }
  });
  port.postMessage({ ready: true });
}
