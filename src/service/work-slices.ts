/**
 * Work done on the event loop in slices of bounded time, each charged to whoever asked for
 * the work: between two items the caller awaits `next()`, which, once the running slice has
 * taken `sliceMs`, charges it and gives the loop a turn, so lookups that arrive meanwhile are
 * answered between slices. `charge` may throw (a budget spent) to stop the work there.
 * Unlike loop-pacer.ts, which yields every so many items of a known cost, this measures,
 * because an item's cost is not known in advance (resolving a schema's refs may inline one
 * object or 256). The clock is injected: tests charge a cost they choose, not real time.
 */

/** Milliseconds a slice may hold the event loop: far below what a lookup notices. */
export const SLICE_MS = 4;

export type WorkSlicesOptions = {
  /** A monotonic clock in milliseconds (performance.now in service). */
  readonly now: () => number;
  readonly sliceMs?: number;
  /** Told the time of each slice as it ends; throws to stop the work. */
  readonly charge?: (ms: number) => void;
};

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class WorkSlices {
  private started: number;
  private spent = 0;

  constructor(private readonly opts: WorkSlicesOptions) {
    this.started = opts.now();
  }

  /** Milliseconds charged so far (the slice under way not included). */
  get chargedMs(): number {
    return this.spent;
  }

  /** Awaited between two items: undefined while the slice goes on, else a turn of the loop once it is charged. */
  next(): Promise<void> | undefined {
    if (this.opts.now() - this.started < (this.opts.sliceMs ?? SLICE_MS)) return undefined;
    this.end();
    return nextTurn().then(() => void (this.started = this.opts.now()));
  }

  /**
   * Runs `wait` (I/O: a store read) off the clock: the slice before it is charged, and a new
   * one starts after it.
   */
  async off<T>(wait: () => Promise<T>): Promise<T> {
    this.end();
    try {
      return await wait();
    } finally {
      this.started = this.opts.now();
    }
  }

  /** Charges the slice under way; the work is done (or stops here if `charge` throws). */
  finish(): void {
    this.end();
  }

  private end(): void {
    const now = this.opts.now();
    const ms = Math.max(0, now - this.started);
    this.started = now;
    this.spent += ms;
    this.opts.charge?.(ms);
  }
}
