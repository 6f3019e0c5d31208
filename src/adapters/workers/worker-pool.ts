/**
 * A small pool of worker threads for CPU-bound jobs that must not run on the event loop that
 * answers queries (schema compilation: up to a second per spec). Bounded everywhere: a few
 * workers, a queue that refuses past its bound (PoolBusyError, which callers turn into a
 * structured 503), a timeout per job after which the worker is terminated and replaced (a
 * job cannot hold a worker forever), optionally a bound on how long a job may wait for a
 * worker (JobWaitError), a replacement for a worker that crashes, and idle workers stopped
 * after a while (an idle registry keeps no thread). `close()` terminates them all and refuses
 * what is still waiting.
 *
 * The wire between the two sides is `{ id, input }` one way and `{ id, output }` or
 * `{ id, error }` back; a worker posts `{ ready: true }` once loaded (serveJobs below). A job
 * may also post `{ id, phase }` as it enters a step with a budget of its own (`phases`; `null`
 * for `timeoutMs`): its time then starts again with that budget (a payload check compiles a
 * schema its worker has not seen under the compilation's budget, then matches under its own).
 * A worker gets one job at a time, so a timeout or a crash concerns exactly one job.
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
 * The job waited `maxWaitMs` for a worker while one was loaded and busy with others: refused
 * without running (its caller has likely given up by the time a worker would be free).
 */
export class JobWaitError extends Error {
  constructor(readonly waitedMs: number) {
    super(`the job waited ${waitedMs} ms for a worker, all of them busy`);
    this.name = "JobWaitError";
  }
}
/**
 * The job ran past its time, or its worker died under it (the worker was replaced either way),
 * or no worker could start (`boot`: a broken install, not the job's fault). `phase`: the step
 * the job was in when it ran out of time (null: the job's own `timeoutMs`).
 */
export class JobFailedError extends Error {
  constructor(readonly reason: LostReason, message: string, options?: ErrorOptions, readonly phase: string | null = null) {
    super(message, options);
    this.name = "JobFailedError";
  }
}

export type WorkerPoolOptions = {
  readonly size: number;
  /** Jobs that may wait for a worker; more are refused at once. */
  readonly maxQueue: number;
  readonly timeoutMs: number;
  /** Budgets of the named steps a job may enter (serveJobs' `phase(name)`). */
  readonly phases?: Readonly<Record<string, number>>;
  /**
   * How long a job may wait for a worker, counted from when a loaded worker exists (a worker
   * still loading does not count against it); past it the job is refused with JobWaitError.
   * Unset: a job waits as long as the queue ahead of it takes.
   */
  readonly maxWaitMs?: number;
  /** A worker with nothing to do for this long is terminated (the next job starts one). */
  readonly idleMs: number;
  readonly spawn: () => Worker;
  /** Told when a worker was terminated for a timeout or died (a metric, a log line). */
  readonly onWorkerLost?: (reason: LostReason, err?: unknown) => void;
};

export type LostReason = "timeout" | "crash" | "boot";

type Job<In, Out> = { id: number; input: In; resolve: (out: Out) => void; reject: (err: unknown) => void; wait: NodeJS.Timeout | null };
type Slot<In, Out> = { worker: Worker; ready: boolean; job: Job<In, Out> | null; timer: NodeJS.Timeout | null; idle: NodeJS.Timeout | null; gone: boolean };
type Reply<Out> = { ready: true } | { id: number; phase: string | null } | { id: number; output: Out } | { id: number; error: string };

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
      const job: Job<In, Out> = { id: this.nextId++, input, resolve, reject, wait: null };
      this.queue.push(job);
      if (this.anyReady()) this.armWait(job);
      this.dispatch();
    });
  }

  /** Terminates every worker; jobs waiting or running are refused with PoolClosedError. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      if (job.wait) clearTimeout(job.wait);
      job.reject(new PoolClosedError());
    }
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

  private anyReady(): boolean {
    for (const slot of this.slots) if (slot.ready) return true;
    return false;
  }

  /** Starts a waiting job's clock (only while some worker is loaded: see maxWaitMs). */
  private armWait(job: Job<In, Out>): void {
    const maxWaitMs = this.opts.maxWaitMs;
    if (maxWaitMs === undefined || job.wait) return;
    job.wait = setTimeout(() => {
      const at = this.queue.indexOf(job);
      if (at < 0) return;
      this.queue.splice(at, 1);
      job.reject(new JobWaitError(maxWaitMs));
    }, maxWaitMs);
  }

  private start(slot: Slot<In, Out>, job: Job<In, Out>): void {
    if (job.wait) clearTimeout(job.wait);
    job.wait = null;
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = null;
    slot.job = job;
    this.runFor(slot, null);
    slot.worker.postMessage({ id: job.id, input: job.input });
  }

  /** (Re)starts the running job's clock, with the budget of `phase` (null: timeoutMs). */
  private runFor(slot: Slot<In, Out>, phase: string | null): void {
    if (slot.timer) clearTimeout(slot.timer);
    const ms = (phase !== null ? this.opts.phases?.[phase] : undefined) ?? this.opts.timeoutMs;
    const what = phase !== null ? `the job's ${phase} step ran longer than ${ms} ms` : `the job ran longer than ${ms} ms`;
    slot.timer = setTimeout(() => this.lose(slot, "timeout", new JobFailedError("timeout", `${what}; its worker was stopped`, undefined, phase)), ms);
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
      for (const job of this.queue) this.armWait(job);
    } else if ("phase" in msg) {
      if (slot.job && msg.id === slot.job.id) this.runFor(slot, msg.phase);
      return;
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
      for (const waiting of this.queue.splice(0)) {
        if (waiting.wait) clearTimeout(waiting.wait);
        waiting.reject(failed);
      }
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
 * The worker's side: answers each `{ id, input }` with `handle(input, phase)`, one at a time,
 * and says it is ready. A handler that throws answers `{ id, error }`; one that calls
 * `phase(name)` starts its job's time again with that step's budget, `phase()` with the job's
 * own (the message reaches the pool while the handler goes on).
 */
export function serveJobs<In, Out>(handle: (input: In, phase: (name?: string) => void) => Out): void {
  const port = parentPort;
  if (!port) throw new Error("serveJobs runs in a worker thread");
  port.on("message", ({ id, input }: { id: number; input: In }) => {
    try {
      port.postMessage({ id, output: handle(input, (name) => port.postMessage({ id, phase: name ?? null })) });
    } catch (e) {
      port.postMessage({ id, error: e instanceof Error ? e.message : String(e) });
    }
  });
  port.postMessage({ ready: true });
}
