/**
 * The worker pool that checks payloads for the `check` op (payload-worker.ts in each thread),
 * behind the PayloadCheckPool port of service/queries/payload-checks.ts; a pool of its own, so hostile
 * checks cannot hold up the compilation registrations wait for. What its failures mean to a
 * caller:
 *
 * - a check that runs past the budget is stopped (its worker terminated and replaced) and
 *   refused with 429 `limit_exceeded`: the same payload against the same schema would take
 *   as long again, so a retry unchanged does not help;
 * - a full queue, a check that waited for a worker as long as a check may run, a worker that
 *   died under a check, no worker able to start, or a stopping registry: 503 `unavailable`
 *   (retry later, as clients do).
 *
 * Compiling the schema, when the worker has not yet, is bounded apart, as a registration's
 * compilation is (REGISTRY_SCHEMA_CHECK_TIMEOUT_MS): the schema was accepted within that, so a
 * fresh worker's compilation never counts against a payload. Past it the check gets 503 (a
 * starved machine, not the payload's fault). So a check is answered within about two budgets
 * of reaching a loaded pool, plus a compilation, and at most `queue` checks wait.
 */
import { ErrorCode, RegistryError } from "../../domain/errors.js";
import type { ErrorIssue } from "../../protocol/errors.js";
import { COMPILE_PHASE, type PayloadCheckJob, type PayloadCheckPool as PayloadCheckPoolPort } from "../../service/queries/payload-checks.js";
import { moduleWorker } from "./module-worker.js";
import { defaultWorkers } from "./schema-pool.js";
import { JobFailedError, JobWaitError, PoolBusyError, PoolClosedError, WorkerPool, type LostReason } from "./worker-pool.js";

export type PayloadCheckPoolOptions = {
  /** Worker threads; 0 picks min(2, cores - 1), at least 1. */
  readonly workers: number;
  /** Checks that may wait for a worker. */
  readonly queue: number;
  /** Longest check (once the schema is compiled), and longest wait for a worker. */
  readonly timeoutMs: number;
  /** Longest compilation of the schema, when the worker has not compiled it yet. */
  readonly compileTimeoutMs: number;
  readonly idleMs?: number;
  readonly onWorkerLost?: (reason: LostReason, err?: unknown) => void;
};

/** Heap of one worker: a 256 KiB payload, its errors and 64 validators fit far below it. */
const WORKER_HEAP_MB = 256;

export class PayloadCheckPool implements PayloadCheckPoolPort {
  private readonly pool: WorkerPool<PayloadCheckJob, ErrorIssue[]>;

  constructor(private readonly opts: PayloadCheckPoolOptions) {
    this.pool = new WorkerPool({
      size: opts.workers > 0 ? opts.workers : defaultWorkers(),
      maxQueue: opts.queue,
      timeoutMs: opts.timeoutMs,
      phases: { [COMPILE_PHASE]: opts.compileTimeoutMs },
      maxWaitMs: opts.timeoutMs,
      idleMs: opts.idleMs ?? 30_000,
      spawn: () => moduleWorker(import.meta.url, "payload-worker", { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } }),
      onWorkerLost: opts.onWorkerLost,
    });
  }

  check(job: PayloadCheckJob): Promise<ErrorIssue[]> {
    return this.pool.run(job).catch((e: unknown) => {
      throw this.refusal(e);
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private refusal(e: unknown): unknown {
    const { timeoutMs, queue } = this.opts;
    if (e instanceof JobFailedError && e.reason === "timeout" && e.phase === COMPILE_PHASE) {
      return new RegistryError(ErrorCode.Unavailable, `compiling the capability's schema for this check took longer than ${this.opts.compileTimeoutMs} ms (REGISTRY_SCHEMA_CHECK_TIMEOUT_MS); retry in a moment`, { cause: e });
    }
    if (e instanceof JobFailedError && e.reason === "timeout") {
      return new RegistryError(
        ErrorCode.LimitExceeded,
        `checking this payload took longer than ${timeoutMs} ms and was stopped: the schema's patterns are too costly on values this long; send shorter values (limit ${timeoutMs} ms, REGISTRY_PAYLOAD_CHECK_TIMEOUT_MS)`,
        { cause: e },
      );
    }
    if (e instanceof JobFailedError && e.reason === "boot") return new RegistryError(ErrorCode.Unavailable, "payload checks are unavailable: their worker threads cannot start", { cause: e });
    if (e instanceof JobFailedError) return new RegistryError(ErrorCode.Unavailable, `the worker checking this payload stopped (${e.message}); retry in a moment`, { cause: e });
    if (e instanceof PoolBusyError) return new RegistryError(ErrorCode.Unavailable, `payload checks are busy: ${e.queued} wait for a worker, the limit is ${queue} (REGISTRY_PAYLOAD_CHECK_QUEUE); retry in a moment`, { cause: e });
    if (e instanceof JobWaitError) return new RegistryError(ErrorCode.Unavailable, `payload checks are busy: this one waited ${e.waitedMs} ms for a worker; retry in a moment`, { cause: e });
    if (e instanceof PoolClosedError) return new RegistryError(ErrorCode.Unavailable, "the registry is stopping", { cause: e });
    return e;
  }
}
