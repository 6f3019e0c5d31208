/**
 * The evictor's bookkeeping inside the view: lower bounds of the live instances written (or
 * adopted from orphans) since the evictor last looked. An instance's deadline can only move
 * earlier by such a write, and it is then at least minObservedAt + missed x minIntervalMs (on
 * the view's clock, the one deadlines count on), so the evictor skips passes over the whole
 * fleet while nothing can be due (docs/performance.md).
 */
import type { InstanceState } from "../model/model.js";

export type InstanceChangeSummary = {
  minObservedAt: number;
  minIntervalMs: number;
  /**
   * The live instances written, when tracked (`track`) and no more than the limit were: a
   * reader that keeps its own schedule (the evictor under memory liveness) files just these.
   * Null when not tracked, or when more were written than the limit: look at them all.
   */
  instances: InstanceState[] | null;
};

export class InstanceChanges {
  private minObserved = Infinity;
  private minInterval = Infinity;
  private limit = 0;
  private written: InstanceState[] | null = null;
  private overflowed = false;

  /** From now on, keep up to `limit` written instances between two takes. */
  track(limit: number): void {
    this.limit = limit;
    this.written ??= [];
  }

  note(i: InstanceState): void {
    if (i.observed_at < this.minObserved) this.minObserved = i.observed_at;
    if (i.heartbeat_interval_ms < this.minInterval) this.minInterval = i.heartbeat_interval_ms;
    if (this.written === null || this.overflowed) return;
    if (this.written.length < this.limit) this.written.push(i);
    else {
      // A bulk load or a fleet registering at once: a full pass is cheaper than the list.
      this.overflowed = true;
      this.written = [];
    }
  }

  /** What was written since the last call, or null when no live instance was. */
  take(): InstanceChangeSummary | null {
    if (this.minObserved === Infinity) return null;
    const changes = { minObservedAt: this.minObserved, minIntervalMs: this.minInterval, instances: this.overflowed ? null : this.written };
    this.minObserved = Infinity;
    this.minInterval = Infinity;
    if (this.written !== null) this.written = [];
    this.overflowed = false;
    return changes;
  }
}
