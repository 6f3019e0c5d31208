/**
 * Stored schemas already inlined (schema-refs.ts, InlinedSchema), kept between resolutions:
 * registrations, schema puts and queries that meet the same named schema reuse its expansion
 * instead of walking its chain of refs again (issue 35, item 6).
 *
 * Sound because a stored schema version never changes, and kept only as long as the set of
 * schemas it was resolved from: every entry belongs to one generation of the SchemaBook, and
 * the cache empties itself when the book's generation moves on (a schema added, or deleted by
 * hand). A resolution that also read schemas from elsewhere (the store, for a schema the view
 * has not applied yet), or that the book changed under while it waited, keeps its expansions
 * to itself (WriteMemo). Bounded: entries are charged their node count, and the oldest go
 * first past MAX_CACHED_NODES (an expansion shares the objects of the schemas it inlines, so
 * this bounds the new objects too).
 */
import type { InlinedSchema, RefMemo } from "./schema-refs.js";

/** Nodes (objects and arrays, plus one per entry) the shared entries may count together. */
export const MAX_CACHED_NODES = 256 * 1024;

export class ResolvedRefCache {
  private readonly entries = new Map<string, InlinedSchema>();
  private generation: number;
  private nodes = 0;

  constructor(
    private readonly book: { readonly generation: number },
    private readonly maxNodes = MAX_CACHED_NODES,
  ) {
    this.generation = book.generation;
  }

  /** Entries kept for the book's current generation. */
  get size(): number {
    this.sync();
    return this.entries.size;
  }

  /**
   * The memo of a resolution from the book as it is now, done in one go (a query): it reads
   * and adds to the shared entries.
   */
  shared(): RefMemo {
    this.sync();
    return { get: (key) => this.entries.get(key), set: (key, inlined) => this.keep(key, inlined) };
  }

  /**
   * The memo of a resolution that may wait between its steps (a write: store reads, turns of
   * the event loop): it reads the shared entries of the generation it started in and keeps
   * what it expands to itself until `share` hands it over.
   */
  forWrite(): WriteMemo {
    this.sync();
    return new WriteMemo(this, this.generation);
  }

  /** The shared entry of `key` while the book is still at `generation`. */
  lookup(key: string, generation: number): InlinedSchema | undefined {
    this.sync();
    return this.generation === generation ? this.entries.get(key) : undefined;
  }

  /** Adds what a write expanded, if the book has not moved since it started. */
  adopt(entries: ReadonlyMap<string, InlinedSchema>, generation: number): void {
    this.sync();
    if (this.generation !== generation) return;
    for (const [key, inlined] of entries) this.keep(key, inlined);
  }

  private keep(key: string, inlined: InlinedSchema): void {
    if (this.entries.has(key)) return;
    const cost = inlined.nodes + 1;
    if (cost > this.maxNodes) return;
    while (this.nodes + cost > this.maxNodes) {
      const [oldest, entry] = this.entries.entries().next().value as [string, InlinedSchema];
      this.entries.delete(oldest);
      this.nodes -= entry.nodes + 1;
    }
    this.entries.set(key, inlined);
    this.nodes += cost;
  }

  private sync(): void {
    if (this.book.generation === this.generation) return;
    this.entries.clear();
    this.nodes = 0;
    this.generation = this.book.generation;
  }
}

/** One write's memo (ResolvedRefCache.forWrite). */
export class WriteMemo implements RefMemo {
  private readonly own = new Map<string, InlinedSchema>();

  constructor(
    private readonly cache: ResolvedRefCache,
    /** The book's generation when the write started reading schemas. */
    readonly generation: number,
  ) {}

  get(key: string): InlinedSchema | undefined {
    return this.own.get(key) ?? this.cache.lookup(key, this.generation);
  }

  set(key: string, inlined: InlinedSchema): void {
    this.own.set(key, inlined);
  }

  /**
   * Hands the write's expansions to the shared cache: call only when every schema they were
   * resolved from came from the book, read in the generation the write started in.
   */
  share(): void {
    this.cache.adopt(this.own, this.generation);
  }
}
