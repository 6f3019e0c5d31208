/**
 * The evictor's bookkeeping inside the view: lower bounds of the live instances written (or
 * adopted from orphans) since the evictor last looked. An instance's deadline can only move
 * earlier by such a write, and it is then at least minObservedAt + missed x minIntervalMs (on
 * the view's clock, the one deadlines count on), so the evictor skips passes over the whole
 * fleet while nothing can be due (docs/performance.md).
 */
import type { InstanceState } from "./model.js";

export class InstanceChanges {
  private minObserved = Infinity;
  private minInterval = Infinity;

  note(i: InstanceState): void {
    if (i.observed_at < this.minObserved) this.minObserved = i.observed_at;
    if (i.heartbeat_interval_ms < this.minInterval) this.minInterval = i.heartbeat_interval_ms;
  }

  /** The bounds since the last call, or null when no live instance was written. */
  take(): { minObservedAt: number; minIntervalMs: number } | null {
    if (this.minObserved === Infinity) return null;
    const changes = { minObservedAt: this.minObserved, minIntervalMs: this.minInterval };
    this.minObserved = Infinity;
    this.minInterval = Infinity;
    return changes;
  }
}
