/**
 * Spots the regular expression shapes that make a backtracking engine (V8's irregexp, which
 * every JS validator of these schemas uses) take exponential or high-polynomial time. The
 * registry never runs a capability's `pattern` itself; coordinators and agents that validate
 * task payloads with it do, so a pattern that can hang them is refused at registration.
 *
 * A heuristic, conservative on purpose (it refuses some safe patterns, docs/reliability.md
 * lists what it catches and what it does not):
 *  - nested repetition (star height 2) with nothing to tell the iterations apart: `(a+)+`,
 *    `(\w*)*`, `(.*a){20}`, `(x+x+)+`, `(\s*,\s*)+`. A mandatory character that the competing
 *    repetitions cannot match fences them (`(-[a-z]+)*`, `([^,]*,){3}` are fine); bounded in bounded
 *    repetition is fine while the choices it multiplies stay under MAX_NESTED_CHOICES
 *    (`(a{1,3}){3}` is, `(a{1,10}){1,10}` is not); exact counts (`(ab{2})+`) are no choice;
 *  - a repeated group whose alternatives can start with the same character: `(a|aa)*`,
 *    `(\w|\d)+` (`(foo|bar)+` is fine);
 *  - a run of more than MAX_BROAD_REPEATS unbounded repeats of broad classes (`.`, `\w`, `\S`,
 *    `[^…]`) with no fence between them: `.*a.*a.*a.*a` backtracks polynomially, degree 4.
 * Pure: it parses the pattern (regex-parse.ts) and never runs it.
 */
import { parsePattern, type CharSet, type Item } from "./regex-parse.js";

export const MAX_BROAD_REPEATS = 3;
/** Largest product of choices allowed for bounded repetition nested in bounded repetition. */
export const MAX_NESTED_CHOICES = 1000;

/** null when the pattern looks safe (or does not parse: the schema compiler reports that), else why not. */
export function patternRisk(pattern: string): string | null {
  let root: Item[][];
  try {
    root = parsePattern(pattern);
  } catch {
    return null;
  }
  const shown = JSON.stringify(pattern.slice(0, 80));
  let broad = 0;
  const visit = (alts: Item[][]): string | null => {
    for (const seq of alts) {
      broad = Math.max(broad, longestBroadChain(seq));
      for (const item of seq) {
        if (item.kind === "atom") continue;
        if (item.quant && item.quant.max > 1) {
          const choices = ambiguousChoices(item.alts);
          if (choices > 1) {
            const bounded = item.quant.max !== Infinity && choices !== Infinity && choices ** item.quant.max <= MAX_NESTED_CHOICES;
            if (!bounded) return `pattern ${shown} nests quantifiers (catastrophic backtracking)`;
          }
          if (item.quant.max > 10 && overlappingAlternatives(item.alts)) {
            return `pattern ${shown} repeats alternatives that can match the same text (catastrophic backtracking)`;
          }
        }
        const found = visit(item.alts);
        if (found) return found;
      }
    }
    return null;
  };
  const found = visit(root);
  if (found) return found;
  if (broad > MAX_BROAD_REPEATS) return `pattern ${shown} repeats a broad class ${broad} times (the limit is ${MAX_BROAD_REPEATS}; polynomial backtracking)`;
  return null;
}

/**
 * How many ways the variable parts of one iteration of a repeated group can split the same
 * text (1 = one way). Two variable parts compete when their characters overlap and nothing
 * mandatory that neither can match lies between them, going forward from the first to the
 * second, across the end of the iteration into the next one when needed: `(a+)+` and
 * `(\s*,\s*)+` compete (the trailing `\s*` meets the next leading one), `(x+x+)+` too;
 * `(-[a-z]+)*` and `(\d{1,3}\.){3}` do not (the `-` and the `.` fence them apart).
 */
function ambiguousChoices(alts: Item[][]): number {
  let total = 1;
  for (const alt of alts) {
    const units = flatten(alt).map(unitOf);
    const n = units.length;
    const involved = new Set<number>();
    units.forEach((x, i) => {
      if (!x.variable) return;
      units.forEach((y, j) => {
        if (!y.variable || !x.sets.some((a) => y.sets.some((b) => overlaps(a, b)))) return;
        for (let k = (i + 1) % n; k !== j; k = (k + 1) % n) {
          const f = units[k]!;
          if (f.fence && ![...x.sets, ...y.sets].some((s) => f.sets.some((t) => overlaps(s, t)))) return;
        }
        involved.add(i).add(j);
      });
    });
    for (const i of involved) total *= units[i]!.choices;
    if (!Number.isFinite(total)) return Infinity;
  }
  return total;
}

type Unit = { sets: CharSet[]; variable: boolean; fence: boolean; choices: number };

function unitOf(item: Item): Unit {
  const q = item.quant;
  const span = q ? q.max - q.min + 1 : 1;
  if (item.kind === "atom") return { sets: [item.set], variable: span > 1, fence: span === 1, choices: span };
  const inner = item.alts.length > 1 ? Math.max(item.alts.length, ambiguousChoices(item.alts)) : innerVariety(item.alts[0] ?? []);
  const repeated = q && inner > 1 ? inner ** Math.min(q.max, 64) : inner;
  return { sets: atomSets(item.alts), variable: span > 1 || inner > 1, fence: false, choices: span * repeated };
}

/** Choices inside one unrepeated sequence: the product of its parts' spans. */
function innerVariety(seq: Item[]): number {
  return flatten(seq).reduce((n, i) => n * unitOf(i).choices, 1);
}

/** Unrepeated single-alternative groups are inlined; lookarounds match no text and are dropped. */
function flatten(seq: Item[]): Item[] {
  return seq.flatMap((i) => (i.kind === "group" && i.zeroWidth ? [] : i.kind === "group" && !i.quant && i.alts.length === 1 ? flatten(i.alts[0]!) : [i]));
}

/**
 * The longest run of unbounded repeats of broad classes in a sequence with nothing between
 * them that the previous one cannot match: `.*a.*a.*` is a run of 3, `\S+@\S+` one of 2
 * (`@` is matched by \S), `[a-zA-Z]+ [a-zA-Z]+` two runs of 1.
 */
function longestBroadChain(seq: Item[]): number {
  let longest = 0;
  let chain = 0;
  let last: CharSet | null = null;
  for (const item of seq) {
    if (item.kind !== "atom") continue;
    if (item.broad && item.quant?.max === Infinity) {
      chain = last && overlaps(last, item.set) ? chain + 1 : 1;
      last = item.set;
      longest = Math.max(longest, chain);
    } else if (last && (item.quant?.min ?? 1) > 0 && !overlaps(last, item.set)) {
      chain = 0;
      last = null;
    }
  }
  return longest;
}

function atomSets(alts: Item[][]): CharSet[] {
  return alts.flatMap((seq) => seq.flatMap((i) => (i.kind === "atom" ? [i.set] : i.zeroWidth ? [] : atomSets(i.alts))));
}

function overlappingAlternatives(alts: Item[][]): boolean {
  if (alts.length < 2) return false;
  const firsts = alts.map(firstSets);
  for (let i = 0; i < firsts.length; i++) {
    for (let j = i + 1; j < firsts.length; j++) {
      if (firsts[i]!.some((a) => firsts[j]!.some((b) => overlaps(a, b)))) return true;
    }
  }
  return false;
}

/** The character sets a sequence can start with (skipping zero-width and optional items). */
function firstSets(seq: Item[]): CharSet[] {
  const out: CharSet[] = [];
  for (const item of seq) {
    if (item.kind === "group" && item.zeroWidth) continue;
    if (item.kind === "atom") out.push(item.set);
    else for (const alt of item.alts) out.push(...firstSets(alt));
    if (!item.quant || item.quant.min > 0) break;
  }
  return out;
}

function overlaps(a: CharSet, b: CharSet): boolean {
  if (a.negated && b.negated) return true;
  if (a.negated || b.negated) {
    const [neg, pos] = a.negated ? [a, b] : [b, a];
    // Overlap unless every character of `pos` is excluded by `neg`.
    return pos.ranges.some(([lo, hi]) => !neg.ranges.some(([nlo, nhi]) => nlo <= lo && hi <= nhi));
  }
  return a.ranges.some(([alo, ahi]) => b.ranges.some(([blo, bhi]) => alo <= bhi && blo <= ahi));
}
