/**
 * Keeps one copy of each distinct JSON value (a capability's input or output schema) however
 * many specs carry it. Fleets share their task formats: at 10,000 agent types the parsed
 * schemas were most of the view's 1.1 million heap objects, and every one of them was
 * marked again on each major garbage collection (docs/performance.md).
 *
 * A shared copy is frozen (nobody may change what other specs point at) and held weakly: once
 * no spec refers to it, the collector frees it and the entry goes with it.
 */
export class JsonInterner {
  private readonly copies = new Map<string, WeakRef<object>>();
  private readonly cleanup = new FinalizationRegistry<string>((text) => {
    // Only if the entry still names the collected copy, not a newer one under the same text.
    if (this.copies.get(text)?.deref() === undefined) this.copies.delete(text);
  });

  /** The shared copy of a value equal to `value` (same JSON text), or `value` itself, frozen, as the first one. */
  intern<T>(value: T): T {
    if (typeof value !== "object" || value === null) return value;
    const text = JSON.stringify(value);
    const held = this.copies.get(text)?.deref();
    if (held !== undefined) return held as T;
    deepFreeze(value);
    this.copies.set(text, new WeakRef(value));
    this.cleanup.register(value, text);
    return value;
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
