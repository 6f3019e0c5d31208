/**
 * The regular expression engine of capability schemas (`pattern`, `patternProperties`,
 * `propertyNames`), given to ajv as `code.regExp`: RE2 semantics through re2js, a pure
 * JavaScript port of RE2 whose matching time is linear in the input whatever the pattern.
 * A backtracking engine (V8's, which ajv uses by default) can take seconds on 40 characters
 * with a pattern as plain as `^a*a*a*a*a*a*b$`, and no heuristic over the pattern's shape
 * catches every such pattern; an engine that cannot backtrack needs no heuristic.
 *
 * A pattern must be both a valid ECMA-262 regular expression with the `u` flag (what JSON
 * Schema says patterns are, so every validator of the fleet can read it) and one that RE2 can
 * compile: backreferences and lookaround cannot run in linear time and are refused.
 * `\s`, `\S` and `.` are rewritten to their ECMA-262 meaning (Unicode spaces, four line
 * terminators), which RE2 spells with ASCII sets.
 */
import { RE2JS } from "re2js";
import type { RegExpEngine } from "ajv/dist/types/index.js";

/** Longest `pattern` accepted: RE2's compile time and memory grow with the pattern. */
export const MAX_PATTERN_LENGTH = 512;

/** A pattern that cannot be used, with the pattern itself so the caller can say where it is. */
export class PatternError extends Error {
  constructor(
    readonly pattern: string,
    message: string,
  ) {
    super(message);
    this.name = "PatternError";
  }
}

export type LinearRegExp = { test(input: string): boolean; toString(): string };

/** Compiles `pattern` for linear-time matching, or throws a PatternError that says why not. */
export function compilePattern(pattern: string): LinearRegExp {
  const shown = JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern);
  if (pattern.length > MAX_PATTERN_LENGTH) throw new PatternError(pattern, `pattern is ${pattern.length} characters; the limit is ${MAX_PATTERN_LENGTH}`);
  try {
    // Parsed only, never run: V8 compiles a RegExp on its first match, not here.
    new RegExp(pattern, "u");
  } catch (e) {
    throw new PatternError(pattern, `pattern ${shown} is not an ECMA-262 regular expression: ${oneLine(e)}`);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(toRe2Syntax(pattern)));
  } catch (e) {
    throw new PatternError(pattern, `pattern ${shown} cannot be matched in linear time (no lookahead, lookbehind or backreferences; repeat counts up to 1000): ${oneLine(e)}`);
  }
  // ajv keys compiled patterns by their text (toString), so it must differ per pattern.
  return { test: (input) => compiled.test(input), toString: () => `/${pattern}/u` };
}

/** The ajv `code.regExp` option. `code` only names it in standalone code, which the registry never generates. */
export const linearRegExp: RegExpEngine = Object.assign((pattern: string) => compilePattern(pattern), { code: "linearRegExp" });

/** ECMA-262 WhiteSpace and LineTerminator, what `\s` matches in JavaScript. */
const SPACES = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
/** Everything else, for `\S` inside a class (a class cannot hold a negated class). */
const NON_SPACES =
  "\\u0000-\\u0008\\u000e-\\u001f\\u0021-\\u009f\\u00a1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\u{10ffff}";
const DOT = "[^\\n\\r\\u2028\\u2029]";

/**
 * Rewrites the three escapes whose meaning differs between ECMA-262 and RE2. The pattern is
 * already a valid `u`-mode expression, where a backslash always escapes the next character
 * and `]` always ends a class, so a scan that tracks only those two is exact.
 */
export function toRe2Syntax(pattern: string): string {
  let out = "";
  let inClass = false;
  let classStart = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[++i] ?? "";
      if (next === "s") out += inClass ? SPACES : `[${SPACES}]`;
      else if (next === "S") out += inClass ? NON_SPACES : `[^${SPACES}]`;
      // A named backreference; re2js would read `\k` as a plain `k` instead of refusing it.
      else if (next === "k") throw new Error("backreference \\k<…>");
      else out += c + next;
    } else if (inClass) {
      // `[]` matches nothing in ECMA-262; RE2 would read the `]` as a member.
      if (c === "]" && i === classStart) out += "^\\u0000-\\u{10ffff}]";
      else out += c;
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      classStart = i + 1;
      out += c;
    } else out += c === "." ? DOT : c;
  }
  return out;
}

const oneLine = (e: unknown): string => String((e as Error).message ?? e).replace(/\s+/g, " ").slice(0, 200);
