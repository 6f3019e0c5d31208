/**
 * The lines the query commands print under their table for the deprecated agent types among
 * what they show (v1.2, docs/trust.md "Deprecation"): a deprecated type still answers, so the
 * table lists it as before and the note says who deprecated it, why, and what to use instead.
 */
import type { DeprecationView } from "../client/types.js";

type Shown = { readonly deprecated?: DeprecationView | undefined };

/** "" when none is deprecated; otherwise a blank line, then one note per deprecated type (each once). */
export function deprecationNotes<T extends Shown>(items: readonly T[], typeOf: (item: T) => string): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const item of items) {
    const d = item.deprecated;
    const type = typeOf(item);
    if (d === undefined || seen.has(type)) continue;
    seen.add(type);
    lines.push(`${type} is deprecated${deprecationWords(d)}`);
  }
  return lines.length === 0 ? "" : `\n\n${lines.join("\n")}`;
}

/** " by alice: why; use successor" (each part when given). */
export function deprecationWords(d: DeprecationView): string {
  return ` by ${d.by}${d.reason === undefined ? "" : `: ${d.reason}`}${d.successor === undefined ? "" : `; use ${d.successor}`}`;
}
