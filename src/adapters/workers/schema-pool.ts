/**
 * The worker pool that compiles capability schemas for the service (schema-worker.ts in each
 * thread), behind the SchemaCompilePool port of service/registration/schema-checks.ts. What the pool's
 * failures mean to an agent: a full queue or a stopping registry is 503 `unavailable` (retry
 * later, as clients do); a schema whose compilation outlives the timeout, or kills its worker,
 * is refused like one that does not compile, without caching the verdict (a retry tries again);
 * workers that cannot start at all (a broken install) are 503 too, never the agent's fault.
 */
import { availableParallelism } from "node:os";
import { ErrorCode, RegistryError } from "../../domain/errors.js";
import type { CompiledSchema, SchemaCompilePool } from "../../service/registration/schema-checks.js";
import { moduleWorker } from "./module-worker.js";
import { JobFailedError, PoolBusyError, PoolClosedError, WorkerPool, type LostReason } from "./worker-pool.js";

export type SchemaPoolOptions = {
  /** Worker threads; 0 picks min(2, cores - 1), at least 1. */
  readonly workers: number;
  /** Schemas that may wait for a worker. */
  readonly queue: number;
  readonly timeoutMs: number;
  readonly idleMs?: number;
  readonly onWorkerLost?: (reason: LostReason, err?: unknown) => void;
};

/** Heap of one worker: far above what compiling a 64 KiB schema takes, far below the host's memory. */
const WORKER_HEAP_MB = 256;

export class SchemaPool implements SchemaCompilePool {
  private readonly pool: WorkerPool<string, CompiledSchema>;

  constructor(private readonly opts: SchemaPoolOptions) {
    this.pool = new WorkerPool({
      size: opts.workers > 0 ? opts.workers : defaultWorkers(),
      maxQueue: opts.queue,
      timeoutMs: opts.timeoutMs,
      idleMs: opts.idleMs ?? 30_000,
      spawn: () => moduleWorker(import.meta.url, "schema-worker", { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } }),
      onWorkerLost: opts.onWorkerLost,
    });
  }

  get queued(): number {
    return this.pool.queued;
  }

  /**
   * Starts a worker now and resolves once it has compiled a trivial schema; rejects when none
   * can start. Loading a worker takes about 0.1 s built and a second from source under load:
   * paid at start rather than by the first registrations.
   */
  async warm(): Promise<void> {
    try {
      await this.pool.run("{}");
    } catch (e) {
      throw new Error(`schema check workers cannot start: ${(e as Error).message}`, { cause: e });
    }
  }

  compile(texts: readonly string[]): Array<Promise<CompiledSchema>> {
    if (this.pool.isClosed) throw new RegistryError(ErrorCode.Unavailable, "the registry is stopping");
    if (this.pool.freeSlots < texts.length) {
      throw new RegistryError(ErrorCode.Unavailable, `spec validation is busy: ${this.pool.queued} schemas wait to be compiled and this spec brings ${texts.length} more; the limit is ${this.opts.queue}; retry in a moment`);
    }
    return texts.map((text) => this.pool.run(text).catch((e: unknown) => this.failed(e)));
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private failed(e: unknown): CompiledSchema {
    if (e instanceof JobFailedError && e.reason === "boot") throw new RegistryError(ErrorCode.Unavailable, "spec validation is unavailable: its worker threads cannot start", { cause: e });
    if (e instanceof JobFailedError) {
      const what = e.reason === "timeout" ? `took longer than ${this.opts.timeoutMs} ms to compile` : "stopped the worker compiling it";
      return { verdict: { path: "", message: `schema ${what}; it was refused (${e.message})` }, ms: e.reason === "timeout" ? this.opts.timeoutMs : 0, transient: true };
    }
    if (e instanceof PoolClosedError) throw new RegistryError(ErrorCode.Unavailable, "the registry is stopping", { cause: e });
    if (e instanceof PoolBusyError) throw new RegistryError(ErrorCode.Unavailable, `spec validation is busy (${e.message}); retry in a moment`, { cause: e });
    throw e;
  }
}

export function defaultWorkers(): number {
  return Math.min(2, Math.max(1, availableParallelism() - 1));
}
