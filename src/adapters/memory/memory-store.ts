/**
 * An in-memory Store with the semantics of a JetStream KV bucket: one global revision
 * sequence, compare-and-set on the key's last revision, delete markers that a watch sees, and
 * the last `history` values of each key kept (1 by default). A watch from revision 0 gives the
 * last value of every key; from a later revision, every kept value after it, as a KV watch
 * resumed from a sequence does. Unit tests use it in place of NATS; the store contract tests
 * hold it to the same rules.
 */
import { StoreConflictError, type RemoveOptions, type Store, type StoreEntry, type StoreHistory, type StoreWatch } from "../../domain/ports.js";

export class MemoryStore implements Store, StoreHistory {
  private seq = 0;
  /** Kept values of each key, oldest first; the last is the current one. */
  private readonly entries = new Map<string, StoreEntry[]>();
  private readonly watchers = new Set<(e: StoreEntry) => void>();
  /** Clock for entry timestamps; tests may replace it. */
  now: () => number = () => Date.now();

  constructor(readonly historyDepth = 1) {}

  async get(key: string): Promise<StoreEntry | null> {
    return this.entries.get(key)?.at(-1) ?? null;
  }

  async history(key: string): Promise<StoreEntry[]> {
    return [...(this.entries.get(key) ?? [])];
  }

  async lastRevision(): Promise<number> {
    return this.seq;
  }

  async write(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    this.checkRevision(key, expectedRevision);
    return this.append(key, "PUT", value);
  }

  async remove(key: string, expectedRevision: number, opts?: RemoveOptions): Promise<void> {
    this.checkRevision(key, expectedRevision);
    if (opts?.purge !== true) {
      this.append(key, "DEL", new Uint8Array());
      return;
    }
    this.append(key, "PURGE", new Uint8Array());
    // As a KV purge: the marker is all the key keeps.
    this.entries.set(key, this.entries.get(key)!.slice(-1));
  }

  watchKept(): Promise<StoreWatch> {
    return this.watchFrom(0, true);
  }

  watch(afterRevision: number): Promise<StoreWatch> {
    return this.watchFrom(afterRevision, afterRevision > 0);
  }

  private async watchFrom(afterRevision: number, everyKept: boolean): Promise<StoreWatch> {
    const kept = everyKept ? [...this.entries.values()].flat() : [...this.entries.values()].map((h) => h.at(-1)!);
    const queue: StoreEntry[] = kept.filter((e) => e.revision > afterRevision).sort((a, b) => a.revision - b.revision);
    let wake: (() => void) | null = null;
    let stopped = false;
    const listener = (e: StoreEntry): void => {
      queue.push(e);
      wake?.();
    };
    this.watchers.add(listener);
    const watchers = this.watchers;
    return {
      stop() {
        stopped = true;
        watchers.delete(listener);
        wake?.();
      },
      async *[Symbol.asyncIterator]() {
        while (!stopped) {
          const next = queue.shift();
          if (next) {
            yield next;
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
      },
    };
  }

  private checkRevision(key: string, expectedRevision: number): void {
    const current = this.entries.get(key)?.at(-1);
    const live = current && current.operation === "PUT" ? current.revision : 0;
    // Like KV create(): a deleted key counts as absent for expectedRevision 0.
    if (expectedRevision === 0 ? live !== 0 : current?.revision !== expectedRevision) throw new StoreConflictError(key);
  }

  private append(key: string, operation: StoreEntry["operation"], value: Uint8Array): number {
    const entry: StoreEntry = { key, revision: ++this.seq, operation, value, created: this.now() };
    let kept = this.entries.get(key);
    if (!kept) this.entries.set(key, (kept = []));
    kept.push(entry);
    if (kept.length > this.historyDepth) kept.splice(0, kept.length - this.historyDepth);
    for (const w of this.watchers) w(entry);
    return entry.revision;
  }
}
