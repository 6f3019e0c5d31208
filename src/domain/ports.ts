/**
 * The store as the domain and services need it: a read port and a write port, each small.
 * The JetStream KV adapter implements them, and so does an in-memory double that unit tests
 * use; the same contract tests run against both (test/unit/store-contract.ts).
 */
import type { StoreEntry } from "./view.js";

export type { StoreEntry };

export type StoreWatch = AsyncIterable<StoreEntry> & { stop(): void };

export interface StoreReader {
  /** The current entry of a key, or null; a DEL/PURGE marker comes back as such. */
  get(key: string): Promise<StoreEntry | null>;
  /**
   * Every change after `afterRevision` (0: the last value of every key, then changes), in store
   * order. The iterator ends when the watch breaks; the caller resumes from what it applied.
   */
  watch(afterRevision: number): Promise<StoreWatch>;
  /** The newest revision in the store (0 when empty). */
  lastRevision(): Promise<number>;
}

export interface StoreWriter {
  /** Writes `value` if the key's current revision is `expectedRevision` (0: absent or deleted). */
  write(key: string, value: Uint8Array, expectedRevision: number): Promise<number>;
  /** Deletes the key if its current revision is `expectedRevision`. */
  remove(key: string, expectedRevision: number): Promise<void>;
}

export type Store = StoreReader & StoreWriter;

/** A compare-and-set lost: someone wrote the key since it was read. */
export class StoreConflictError extends Error {
  constructor(readonly key: string, cause?: unknown) {
    super(`write conflict on ${key}`, cause === undefined ? undefined : { cause });
    this.name = "StoreConflictError";
  }
}

/** The store could not be reached or did not answer in time; the outcome of a write is unknown. */
export class StoreUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "StoreUnavailableError";
  }
}
