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
import type { InstanceState } from "../model/model.js";

/** Above this many slots to step over, `take` walks the filed slots instead (after a long pause). */
const STEP_LIMIT = 4096;

/**
 * Where a wheel keeps the slot an instance counts under: on the instance itself, under the
 * wheel's own symbol (invisible to JSON and Object.keys; two wheels never share one). A map of
 * a million instances, deleted from and added to at the heartbeat rate, rebuilt its whole table
 * about every 30 s: 400-600 ms of blocked event loop each time at 1,000,000 instances (the
 * evictor's share of fleet-1m's longest stalls, issue 20), and a 50 MB allocation.
 * Slots are stored relative to the wheel's first one, so they stay small integers, which V8
 * keeps in the object without a box; null means not filed.
 */
type Slotted = { [key: symbol]: number | null | undefined };

export class CheckWheel {
  private readonly slots = new Map<number, InstanceState[]>();
  private readonly key = Symbol("check wheel slot");
  /** The first slot filed: slots are kept on instances relative to it. */
  private origin: number | null = null;
  private filed = 0;
  /** Every slot before this one has been taken, and this one as far as the last take. */
  private cursor = -Infinity;

  constructor(private readonly slotMs: number) {}

  /** Files `instance` for a look at `at` (ms), unless it is filed no later already. */
  file(instance: InstanceState, at: number): void {
    // A time already passed goes to the current slot: the next take has it.
    const slot = Math.max(Math.floor(at / this.slotMs), this.cursor);
    if (this.origin === null && Number.isFinite(slot)) this.origin = slot;
    const relative = slot - (this.origin ?? 0);
    const holder = instance as unknown as Slotted;
    const current = holder[this.key];
    if (current !== undefined && current !== null) {
      if (current <= relative) return;
    } else {
      this.filed++;
    }
    holder[this.key] = relative;
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
      const relative = slot - (this.origin ?? 0);
      for (const i of entries) {
        const holder = i as unknown as Slotted;
        // A stale copy: the instance was filed earlier since, and already taken or still filed there.
        if (holder[this.key] !== relative) continue;
        holder[this.key] = null;
        this.filed--;
        taken.push(i);
      }
    }
    this.cursor = last;
    return taken;
  }

  clear(): void {
    for (const entries of this.slots.values()) for (const i of entries) (i as unknown as Slotted)[this.key] = null;
    this.slots.clear();
    this.filed = 0;
    this.cursor = -Infinity;
  }

  /** Instances filed. */
  get size(): number {
    return this.filed;
  }
}
