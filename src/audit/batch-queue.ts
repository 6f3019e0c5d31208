/**
 * Between the stream reader and the database writer: the reader pushes messages as they come,
 * the writer takes everything that arrived while it was committing, up to a batch. Batches
 * therefore grow with the load by themselves: one event when idle (lowest lag), full batches
 * when behind (highest throughput). Bounded: a reader that gets `limit` ahead waits for room,
 * so the consumer's own flow control holds the rest on the server.
 */
export class BatchQueue<T> {
  readonly #items: T[] = [];
  #ended = false;
  #error: unknown;
  #wake: (() => void) | undefined;
  #room: (() => void) | undefined;

  constructor(private readonly limit: number) {}

  /** Resolves when there is room for more (at once, usually). */
  async push(item: T): Promise<void> {
    this.#items.push(item);
    this.#wake?.();
    this.#wake = undefined;
    while (this.#items.length >= this.limit && !this.#ended) await new Promise<void>((r) => (this.#room = r));
  }

  /** Up to `max` items, waiting for the first; an empty array once ended and drained (throws the reader's error, if any). */
  async take(max: number): Promise<T[]> {
    while (this.#items.length === 0) {
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return [];
      }
      await new Promise<void>((r) => (this.#wake = r));
    }
    const batch = this.#items.splice(0, max);
    this.#room?.();
    this.#room = undefined;
    return batch;
  }

  /** No more items will come; `error` is what stopped the reader. Releases both sides. */
  end(error?: unknown): void {
    this.#ended = true;
    if (error !== undefined) this.#error = error;
    this.#wake?.();
    this.#room?.();
    this.#wake = this.#room = undefined;
  }
}
