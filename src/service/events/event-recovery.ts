/**
 * Rebuilds what a replica needs to derive the events of writes made after the last stored
 * event, when the replica that made them died before publishing them (docs/protocol.md
 * section 8). The registry is the bucket's only writer, so those writes are exactly the
 * bucket's revisions after that event. Replaying them in store order onto the view as it was
 * then derives the events a live replica would have derived; this module finds, for every key
 * written in that range, its value as of then (the "seed"), from the values the bucket keeps
 * per key (its `history`).
 *
 * A key written `history` times or more since then no longer holds its earlier value (a
 * heartbeat is a write too): its events up to its oldest kept value cannot be derived. Such a
 * key is seeded with that oldest kept value, so the replay derives nothing wrong for it, and is
 * reported rather than guessed.
 */
import type { StoreEntry, StoreHistory } from "../../domain/ports.js";
import { parseKey } from "../../domain/model/records.js";
import { isTrustRootsKey } from "../../domain/trust/bucket-trust.js";

/** Keys whose history is read at once: each read is one short-lived ordered consumer. */
const CONCURRENCY = 16;
/**
 * Up to this many keys, each key's history is read (a consumer each, ~4 ms apiece on the
 * server: 5,500 keys held a start for 23 s); beyond it, one pass over every kept value up to
 * the recovery point finds them all (~100,000 values a second).
 */
const PER_KEY_READS = 64;

export type RecoveryPlan = {
  /** The value of each key as of the recovery point (or its oldest kept one), in store order. */
  seeds: StoreEntry[];
  /** Keys whose value as of the recovery point is no longer kept. */
  unrecoverable: string[];
};

/**
 * `range`: every kept entry after `after`, in store order (a watch resumed from there).
 * Keys written fewer than `historyDepth` times in the range still keep their earlier value;
 * only those are looked up in the store (at most `maxReads` of them; the others count as lost).
 */
export async function planRecovery(range: readonly StoreEntry[], after: number, history: StoreHistory, maxReads = Infinity): Promise<RecoveryPlan> {
  const written = new Map<string, { first: StoreEntry; count: number }>();
  for (const e of range) {
    // Reserved keys derive no events, but for a tenant's trust roots (v1.2): a delete's event needs the entry it deletes.
    if (e.revision <= after || (parseKey(e.key).kind === "reserved" && !isTrustRootsKey(e.key))) continue;
    const w = written.get(e.key);
    if (w) w.count++;
    else written.set(e.key, { first: e, count: 1 });
  }
  const depth = history.historyDepth;
  const seeds: StoreEntry[] = [];
  const unrecoverable: string[] = [];
  const lost = (key: string, first: StoreEntry): void => {
    unrecoverable.push(key);
    seeds.push(first);
  };
  const toRead: Array<[string, StoreEntry]> = [];
  for (const [key, w] of written) {
    // Beyond `maxReads` keys, reading every history would hold the start too long.
    if (w.count >= depth || toRead.length >= maxReads) lost(key, w.first);
    else toRead.push([key, w.first]);
  }
  if (toRead.length > PER_KEY_READS) {
    const found = await valuesAsOf(new Set(toRead.map(([key]) => key)), after, history);
    for (const [key] of toRead) {
      const before = found.get(key);
      // Nothing as old is kept: the key was created in the range (one written `depth` times
      // in it, whose older values are gone, was counted as lost above).
      if (before) seeds.push(before);
    }
  } else {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < toRead.length) {
        const [key, first] = toRead[next++]!;
        const kept = await history.history(key);
        const before = kept.filter((e) => e.revision <= after).at(-1);
        if (before) seeds.push(before);
        // Nothing as old is kept: the key was created in the range, unless its history is full.
        else if (kept.length >= depth) lost(key, first);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, toRead.length) }, worker));
  }
  seeds.sort((a, b) => a.revision - b.revision);
  unrecoverable.sort();
  return { seeds, unrecoverable };
}

/** The latest kept value at or before `after` of each of `keys`, from one pass over the kept values. */
async function valuesAsOf(keys: ReadonlySet<string>, after: number, history: StoreHistory): Promise<Map<string, StoreEntry>> {
  const found = new Map<string, StoreEntry>();
  const watch = await history.watchKept();
  try {
    for await (const e of watch) {
      if (e.revision > after) return found;
      if (keys.has(e.key)) found.set(e.key, e);
    }
  } finally {
    watch.stop();
  }
  // The range after `after` is not empty, so a watch that ends before it broke.
  throw new Error(`the watch of kept values ended before revision ${after}`);
}
