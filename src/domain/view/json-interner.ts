/**
 * Keeps one copy of each distinct JSON value (a capability's input or output schema) however
 * many specs carry it. Fleets share their task formats: at 10,000 agent types the parsed
 * schemas were most of the view's 1.1 million heap objects, and every one of them was
 * marked again on each major garbage collection (docs/performance.md).
 *
 * A shared copy is frozen: nobody may change what other specs point at. Copies are held
 * strongly and dropped by retainOnly(), which the owner calls with the values still in use,
 * so what is kept never depends on when the collector runs (no WeakRef/FinalizationRegistry).
 */
export class JsonInterner {
  private readonly copies = new Map<string, object>();

  /** The shared copy of a value equal to `value` (same JSON text), or `value` itself, frozen, as the first one. */
  intern<T>(value: T): T {
    if (typeof value !== "object" || value === null) return value;
    const text = JSON.stringify(value);
    const held = this.copies.get(text);
    if (held !== undefined) return held as T;
    deepFreeze(value);
    this.copies.set(text, value);
    return value;
  }

  /** Forgets every copy not in `used`. */
  retainOnly(used: ReadonlySet<unknown>): void {
    for (const [text, value] of this.copies) if (!used.has(value)) this.copies.delete(text);
  }

  /** Distinct values held (for tests and metrics). */
  get size(): number {
    return this.copies.size;
  }
}

/** Iterative: a schema's depth is bounded elsewhere, but nothing here should recurse on input. JSON has no cycles. */
function deepFreeze(root: object): void {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    Object.freeze(node);
    for (const v of Object.values(node)) if (typeof v === "object" && v !== null) stack.push(v);
  }
}
