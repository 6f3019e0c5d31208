/**
 * The requests waiting until this replica's view reaches a store revision (`min_revision`,
 * PROTOCOL.md section 2, and the registrar catching up before a retry). Bounded: past
 * `maxWaiters` a wait is refused at once, so a client cannot park tens of thousands of
 * queries on a far-ahead revision and stall everyone else (issue 14). Kept in a min-heap by
 * revision, so an applied entry wakes only the waiters it satisfies, and a timed-out waiter
 * leaves in O(log n).
 */
import { ErrorCode, RegistryError } from "../../domain/errors.js";
import { MinHeap, type HeapItem } from "../../domain/min-heap.js";

/** How long a query waits for its `min_revision` before it is answered `stale_view`. */
export const MIN_REVISION_WAIT_MS = 2000;

/** `full`: refused at once, `maxWaiters` requests were waiting already. */
export type RevisionWait = "reached" | "timed_out" | "full";

type Waiter = HeapItem & { resolve: (outcome: RevisionWait) => void; timer: NodeJS.Timeout };

export class RevisionWaiters {
  private readonly heap = new MinHeap<Waiter>();

  constructor(private readonly maxWaiters: number) {}

  get size(): number {
    return this.heap.size;
  }

  /** Resolves once `reached(revision or later)` is called, after `timeoutMs`, or at once when full. */
  wait(revision: number, timeoutMs: number): Promise<RevisionWait> {
    if (this.heap.size >= this.maxWaiters) return Promise.resolve("full");
    return new Promise((resolve) => {
      const waiter: Waiter = { key: revision, heapIndex: -1, resolve, timer: undefined as unknown as NodeJS.Timeout };
      waiter.timer = setTimeout(() => {
        this.heap.remove(waiter);
        resolve("timed_out");
      }, timeoutMs);
      this.heap.push(waiter);
    });
  }

  /** The view applied `applied`: wakes every waiter at or below it, and no other. */
  reached(applied: number): void {
    for (let top = this.heap.peek(); top !== undefined && top.key <= applied; top = this.heap.peek()) {
      this.heap.pop();
      clearTimeout(top.timer);
      top.resolve("reached");
    }
  }

  /** Answers every waiter as timed out (the feed stops). */
  cancelAll(): void {
    for (const w of this.heap.drain()) {
      clearTimeout(w.timer);
      w.resolve("timed_out");
    }
  }
}

/**
 * Waits for the view to apply `minRevision`, else throws `stale_view`: after MIN_REVISION_WAIT_MS,
 * or at once when too many queries wait already. Every query that takes `min_revision` waits here.
 */
export async function reachRevision(wait: (revision: number, timeoutMs: number) => Promise<RevisionWait>, viewRevision: () => number, minRevision: number): Promise<void> {
  const outcome = await wait(minRevision, MIN_REVISION_WAIT_MS);
  if (outcome === "full") {
    throw new RegistryError(ErrorCode.StaleView, `this replica's view is at revision ${viewRevision()}; too many queries are waiting for a revision here to wait for min_revision ${minRevision}`);
  }
  if (outcome === "timed_out") {
    throw new RegistryError(ErrorCode.StaleView, `this replica's view is at revision ${viewRevision()}; min_revision ${minRevision} not reached in ${MIN_REVISION_WAIT_MS} ms`);
  }
}
