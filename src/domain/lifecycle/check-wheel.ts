/**
 * When each live instance is next worth a look, under memory liveness, so the evictor looks at
 * the few whose time came instead of passing over the whole fleet. A full pass ran each time
 * the earliest instance could turn late, which under steady heartbeats is every half interval
 * or so: at 200,000 instances that was 12 % of the registry's busy time, and at 1,000,000 a
 * pass held the event loop for about a second (issue 20).
 *
 * Lazy, as a timing wheel: an instance is filed under the slot of the time its judgement can
 * next change (judgeMemoryLiveness) and is not moved when it is heard; taken at that time, it
 * is judged again and filed later if it was heard meanwhile. So each instance costs about one
 * look per interval, spread over the interval. Filed twice, only the earlier entry counts.
 */
import type { InstanceState } from "../view/model.js";

/** Above this many slots to step over, `take` walks the filed slots instead (after a long pause). */
const STEP_LIMIT = 4096;

export class CheckWheel {
  private readonly slots = new Map<number, InstanceState[]>();
  /** The slot each filed instance counts under; an entry elsewhere is a stale copy. */
  private readonly filed = new Map<InstanceState, number>();
  /** Every slot before this one has been taken, and this one as far as the last take. */
  private cursor = -Infinity;

  constructor(private readonly slotMs: number) {}

  /** Files `instance` for a look at `at` (ms), unless it is filed no later already. */
  file(instance: InstanceState, at: number): void {
    // A time already passed goes to the current slot: the next take has it.
    const slot = Math.max(Math.floor(at / this.slotMs), this.cursor);
    const current = this.filed.get(instance);
    if (current !== undefined && current <= slot) return;
    this.filed.set(instance, slot);
    const entries = this.slots.get(slot);
    if (entries) entries.push(instance);
    else this.slots.set(slot, [instance]);
  }

  /**
   * The instances filed for a time in a slot up to `now`'s, earliest slot first; they leave the
   * wheel. Some may be filed for later in `now`'s own slot: the caller judges and files them
   * again, and the next take in that slot has them again.
   */
  take(now: number): InstanceState[] {
    const last = Math.floor(now / this.slotMs);
    const taken: InstanceState[] = [];
    if (last < this.cursor) return taken;
    const due =
      this.cursor === -Infinity || last - this.cursor > Math.max(STEP_LIMIT, this.slots.size)
        ? [...this.slots.keys()].filter((s) => s <= last).sort((a, b) => a - b)
        : Array.from({ length: last - this.cursor + 1 }, (_, k) => this.cursor + k);
    for (const slot of due) {
      const entries = this.slots.get(slot);
      if (!entries) continue;
      this.slots.delete(slot);
      for (const i of entries) {
        if (this.filed.get(i) !== slot) continue;
        this.filed.delete(i);
        taken.push(i);
      }
    }
    this.cursor = last;
    return taken;
  }

  clear(): void {
    this.slots.clear();
    this.filed.clear();
    this.cursor = -Infinity;
  }

  /** Instances filed. */
  get size(): number {
    return this.filed.size;
  }
}
