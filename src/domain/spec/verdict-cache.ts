/**
 * Verdicts of schemas already checked, keyed by the schema's JSON text and bounded in
 * characters (a count of entries would let 10,000 schemas of 64 KiB in), oldest out first.
 * An agent that registers the same spec again, as every replica of a type does, pays for a
 * lookup instead of a compilation.
 */
import type { SchemaVerdict } from "./schema-compiler.js";

/** Characters of schema text the cache may hold. */
export const CACHE_MAX_CHARS = 8 * 1024 * 1024;

export class VerdictCache {
  private readonly entries = new Map<string, SchemaVerdict>();
  private chars = 0;

  constructor(private readonly maxChars = CACHE_MAX_CHARS) {}

  /** undefined when the text was not checked (or was forgotten). */
  get(text: string): SchemaVerdict | undefined {
    return this.entries.get(text);
  }

  set(text: string, verdict: SchemaVerdict): void {
    if (this.entries.has(text)) return;
    while (this.entries.size > 0 && this.chars + text.length > this.maxChars) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
    this.entries.set(text, verdict);
    this.chars += text.length;
  }

  get cachedChars(): number {
    return this.chars;
  }
}
