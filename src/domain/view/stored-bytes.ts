/**
 * What one key of the bucket holds, estimated for the byte budgets
 * (domain/lifecycle/byte-budgets.ts). The bucket keeps up to `history` values per key, and an
 * instance comes to that many within a few heartbeats under store liveness (under memory
 * liveness, with its status changes and suspect marks, in time too): so a key counts as
 * `history` copies of its last value, and the view keeps one number per key, that value's size.
 */

/**
 * Per value, beyond the value itself and its key: the subject's `$KV.<bucket>.` prefix, the
 * compare-and-set header, and the server's framing (30 bytes on nats-server 2.9 to 2.15).
 * Generous on purpose: for a budget, erring high is the safe side.
 */
export const VALUE_OVERHEAD_BYTES = 128;

/** A key this view knows nothing of. */
export const NOTHING_STORED = 0;

/** One value of a key as the bucket stores it, estimated. */
export function valueBytes(value: number, keyLength: number): number {
  return value + keyLength + VALUE_OVERHEAD_BYTES;
}

/**
 * A tombstone replaces the newest value of a key whose older ones are the live records it
 * follows: counted as the larger of the two until the key is deleted.
 */
export function tombstoneBytes(before: number, value: number, keyLength: number): number {
  return Math.max(before, valueBytes(value, keyLength));
}
