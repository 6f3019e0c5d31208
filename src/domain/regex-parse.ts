/**
 * A small parser of the ECMAScript regular expression syntax (as ajv compiles `pattern`, with
 * the `u` flag), into what pattern-risk.ts needs: sequences of atoms (each with the set of
 * characters it can match) and groups of alternatives, each with its quantifier. Anchors and
 * word boundaries match no text and are dropped; back-references match anything. It throws
 * on what it cannot parse; the schema compiler reports such patterns itself.
 */

export type Range = readonly [number, number];
/** Characters an atom can match: explicit ranges, or everything but them (negated, dot). */
export type CharSet = { readonly negated: boolean; readonly ranges: readonly Range[] };
export type Quant = { readonly min: number; readonly max: number };
export type Item =
  | { readonly kind: "atom"; readonly set: CharSet; readonly broad: boolean; quant: Quant | null }
  | { readonly kind: "group"; readonly alts: Item[][]; readonly zeroWidth: boolean; quant: Quant | null };

const ANY: CharSet = { negated: true, ranges: [] };
const DIGIT: Range[] = [[48, 57]];
const WORD: Range[] = [[48, 57], [65, 90], [95, 95], [97, 122]];
const SPACE: Range[] = [[9, 13], [32, 32], [160, 160], [0x2028, 0x2029], [0xfeff, 0xfeff]];

/** The pattern as alternatives of sequences of items. */
export function parsePattern(pattern: string): Item[][] {
  return new Parser(pattern).parse();
}

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Item[][] {
    const alts = this.alternatives();
    if (this.i < this.src.length) throw new Error("unbalanced )");
    return alts;
  }

  private alternatives(): Item[][] {
    const alts: Item[][] = [[]];
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (c === ")") break;
      if (c === "|") {
        this.i++;
        alts.push([]);
        continue;
      }
      const item = this.item();
      if (item) alts[alts.length - 1]!.push(item);
    }
    return alts;
  }

  private item(): Item | null {
    const c = this.src[this.i++]!;
    let item: Item | null;
    if (c === "^" || c === "$") return null;
    if (c === "(") item = this.group();
    else if (c === "[") item = this.atom(this.charClass());
    else if (c === "\\") item = this.escape();
    else if (c === ".") item = this.atom(ANY, true);
    else if ("*+?{".includes(c)) throw new Error("nothing to repeat");
    else item = this.atom(literal(c.codePointAt(0)!));
    if (item) item.quant = this.quantifier();
    return item;
  }

  private atom(set: CharSet, broad = set.negated || width(set) > 30): Item {
    return { kind: "atom", set, broad, quant: null };
  }

  private group(): Item {
    let zeroWidth = false;
    if (this.src[this.i] === "?") {
      const rest = this.src.slice(this.i, this.i + 4);
      if (/^\?(=|!|<=|<!)/.test(rest)) zeroWidth = true;
      if (rest.startsWith("?<") && !/^\?<[=!]/.test(rest)) this.i = this.src.indexOf(">", this.i) + 1;
      else this.i += rest.startsWith("?<") ? 3 : 2;
    }
    const alts = this.alternatives();
    if (this.src[this.i] !== ")") throw new Error("unbalanced (");
    this.i++;
    return { kind: "group", alts, zeroWidth, quant: null };
  }

  private escape(): Item | null {
    const c = this.src[this.i++];
    if (c === undefined) throw new Error("trailing backslash");
    if (c === "b" || c === "B") return null;
    if (/[1-9]/.test(c) || c === "k") return this.atom(ANY, true); // back-references: anything
    return this.atom(this.escapeSet(c));
  }

  private escapeSet(c: string): CharSet {
    switch (c) {
      case "d": return { negated: false, ranges: DIGIT };
      case "D": return { negated: true, ranges: DIGIT };
      case "w": return { negated: false, ranges: WORD };
      case "W": return { negated: true, ranges: WORD };
      case "s": return { negated: false, ranges: SPACE };
      case "S": return { negated: true, ranges: SPACE };
      case "p": case "P": this.skipBraces(); return ANY;
      case "u": case "x": return this.skipHex(c);
      default: return literal(c.codePointAt(0)!);
    }
  }

  private skipBraces(): void {
    if (this.src[this.i] === "{") this.i = this.src.indexOf("}", this.i) + 1 || this.src.length;
  }

  private skipHex(c: string): CharSet {
    const m = /^\{([0-9a-fA-F]+)\}|^[0-9a-fA-F]{2,4}/.exec(this.src.slice(this.i));
    if (!m) return literal(c.codePointAt(0)!);
    this.i += m[0].length;
    return literal(parseInt(m[1] ?? m[0], 16));
  }

  private charClass(): CharSet {
    const negated = this.src[this.i] === "^";
    if (negated) this.i++;
    const ranges: Range[] = [];
    let any = false;
    while (this.i < this.src.length && this.src[this.i] !== "]") {
      const lo = this.classAtom();
      if (lo.negated || lo.ranges.length !== 1 || lo.ranges[0]![0] !== lo.ranges[0]![1]) {
        if (lo.negated) any = true;
        else ranges.push(...lo.ranges);
        continue;
      }
      if (this.src[this.i] === "-" && this.src[this.i + 1] !== "]" && this.i + 1 < this.src.length) {
        this.i++;
        const hi = this.classAtom();
        ranges.push([lo.ranges[0]![0], hi.ranges[0]?.[1] ?? lo.ranges[0]![0]]);
      } else ranges.push(lo.ranges[0]!);
    }
    if (this.src[this.i] !== "]") throw new Error("unterminated class");
    this.i++;
    if (any) return negated ? { negated: false, ranges: [] } : ANY;
    return { negated, ranges };
  }

  private classAtom(): CharSet {
    const c = this.src[this.i++]!;
    if (c !== "\\") return literal(c.codePointAt(0)!);
    const e = this.src[this.i++] ?? "\\";
    return e === "b" ? literal(8) : this.escapeSet(e);
  }

  private quantifier(): Quant | null {
    const c = this.src[this.i];
    let q: Quant | null = null;
    if (c === "*") q = { min: 0, max: Infinity };
    else if (c === "+") q = { min: 1, max: Infinity };
    else if (c === "?") q = { min: 0, max: 1 };
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return null;
      const min = Number(m[1]);
      q = { min, max: m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]) };
      this.i += m[0].length - 1;
    }
    if (!q) return null;
    this.i++;
    if (this.src[this.i] === "?") this.i++; // lazy: the same backtracking, in another order
    return q;
  }
}

const literal = (code: number): CharSet => ({ negated: false, ranges: [[code, code]] });
const width = (s: CharSet): number => s.ranges.reduce((n, [lo, hi]) => n + hi - lo + 1, 0);
