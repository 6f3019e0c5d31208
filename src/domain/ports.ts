/**
 * The store as the domain and services need it: a read port and a write port, each small.
 * The JetStream KV adapter implements them, and so does an in-memory double that unit tests
 * use; the same contract tests run against both (test/unit/store-contract.ts).
 */

/**
 * The clock port: epoch milliseconds on the clock of the machine the code runs on. Time comes
 * in through it (or as an argument), so tests can pass a manual clock.
 */
export type Clock = { now(): number };

/** One key's state at one revision, as the store reports it; DEL and PURGE are markers. */
export type StoreEntry = {
  readonly key: string;
  readonly revision: number;
  readonly operation: "PUT" | "DEL" | "PURGE";
  readonly value: Uint8Array;
  /** When the store accepted the write (ms); the time of derived events. */
  readonly created: number;
};

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

/**
 * `purge`: the key's kept values go too (a KV purge rolls them up into its marker), for a key
 * removed for good: a plain delete leaves up to `history - 1` values in the bucket for ever, a
 * leak a fleet that churns instances or agent types could fill the bucket with (issue 35).
 * Without it they stay, for a start to read (the evictor lease's release).
 */
export type RemoveOptions = { readonly purge?: boolean };

export interface StoreWriter {
  /** Writes `value` if the key's current revision is `expectedRevision` (0: absent or deleted). */
  write(key: string, value: Uint8Array, expectedRevision: number): Promise<number>;
  /** Deletes the key if its current revision is `expectedRevision`. */
  remove(key: string, expectedRevision: number, opts?: RemoveOptions): Promise<void>;
}

export type Store = StoreReader & StoreWriter;

/** The values a store keeps per key (a KV bucket's `history`), for rebuilding an earlier state. */
export interface StoreHistory {
  /** Values kept per key; 1 means only the current one. */
  readonly historyDepth: number;
  /** The values of a key the store still keeps, oldest first (at most historyDepth). */
  history(key: string): Promise<StoreEntry[]>;
  /**
   * Every value the store still keeps, of every key, oldest first, then changes as they come
   * (the caller stops it). One pass over the bucket: reading the history of thousands of keys
   * one by one cost a consumer each, about 4 ms apiece on the server.
   */
  watchKept(): Promise<StoreWatch>;
}

/** A compare-and-set lost: someone wrote the key since it was read. */
export class StoreConflictError extends Error {
  constructor(readonly key: string, cause?: unknown) {
    super(`write conflict on ${key}`, cause === undefined ? undefined : { cause });
    this.name = "StoreConflictError";
  }
}

/** The store refused the write because it is full (its max_bytes); nothing was written. */
export class StoreFullError extends Error {
  constructor(readonly key: string, cause?: unknown) {
    super(`the store is full: write of ${key} refused`, cause === undefined ? undefined : { cause });
    this.name = "StoreFullError";
  }
}

/** The store could not be reached or did not answer in time; the outcome of a write is unknown. */
export class StoreUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "StoreUnavailableError";
  }
}
