/**
 * The linear-time engine of capability patterns (issue 14, finding 14): what a backtracking
 * engine takes seconds or forever on is handled on 10,000 characters; what RE2 cannot run is
 * refused with the reason; and on what both engines accept, the answers are JavaScript's.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Ajv } from "ajv";
import { MAX_PATTERN_LENGTH, PatternError, compilePattern, linearRegExp } from "../../../../src/domain/spec/linear-regexp.js";

describe("compilePattern", () => {
  // Each runs for seconds on 40 characters, or practically forever on 10,000, under V8's engine.
  const hostile: Array<[string, string, boolean]> = [
    ["^[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*!$", "a".repeat(10_000), false],
    ["^a*a*a*a*a*a*b$", "a".repeat(10_000), false],
    ["^a*a*a*a*a*a*b$", `${"a".repeat(9_999)}b`, true],
    ["^(a+)+$", `${"a".repeat(9_999)}!`, false],
    ["(.*a){20}", `${"a".repeat(19)}${"x".repeat(9_981)}`, false],
    [".*a.*a.*a.*a.*b", "a".repeat(10_000), false],
    ["^(a|aa)*b$", "a".repeat(10_000), false],
    ["^(\\w+\\s?)*$", `${"word ".repeat(1_999)}word!`, false],
  ];

  it.each(hostile)("compiles %s and answers on a hostile 10,000-character input", (pattern, input, expected) => {
    expect(input).toHaveLength(10_000);
    expect(compilePattern(pattern).test(input)).toBe(expected);
  });

  const unsupported: Array<[string, RegExp]> = [
    ["^(?=.*\\d).{8,}$", /cannot be matched in linear time.*\(\?=/],
    ["^(?!admin).*$", /cannot be matched in linear time/],
    ["(?<=\\$)\\d+", /cannot be matched in linear time/],
    ["(?<!-)\\d+", /cannot be matched in linear time/],
    ["^(a)\\1$", /cannot be matched in linear time/],
    ["^(?<q>[\"'])x\\k<q>$", /cannot be matched in linear time.*backreference/],
    ["a{1001}", /repeat count/],
  ];

  it.each(unsupported)("refuses %s, which no linear-time engine runs, saying why", (pattern, reason) => {
    expect(() => compilePattern(pattern)).toThrow(PatternError);
    expect(() => compilePattern(pattern)).toThrow(reason);
  });

  it("refuses what is not ECMA-262 (with the u flag), even when RE2 would read it", () => {
    for (const p of ["(?i)abc", "\\pL", "\\Qa.b\\E", "(unclosed", "a++", "\\z"]) {
      expect(() => compilePattern(p), p).toThrow(/is not an ECMA-262 regular expression/);
    }
    expect(() => compilePattern("a".repeat(MAX_PATTERN_LENGTH + 1))).toThrow(/the limit is 512/);
  });

  it("gives every pattern its own text, which ajv keys compiled patterns by", () => {
    expect(String(compilePattern("^a$"))).not.toBe(String(compilePattern("^b$")));
  });

  it("reads the escapes whose meaning differs between RE2 and JavaScript as JavaScript does", () => {
    const cases: Array<[string, string]> = [
      ["^\\s$", "\u00a0"], ["^\\s$", "\u2003"], ["^\\s$", "\ufeff"], ["^\\s$", "\v"], ["^\\S$", "\u3000"], ["^[\\S]$", "x"], ["^[^\\s]$", "\u2028"],
      ["^.$", "\u2028"], ["^.$", "\r"], ["^.$", "😀"], ["^[.]$", "x"], ["[]", "a"], ["[^]", "\n"], ["^[\\]]$", "]"], ["^[\\[]$", "["],
      ["^\\u{1F600}$", "😀"], ["^\\u00e9$", "é"], ["^\\p{Lu}+$", "ÉA"], ["(?<year>\\d{4})", "2024"], ["^\\w+$", "é"], ["\\bfoo\\b", "a foo"],
    ];
    for (const [p, s] of cases) expect(compilePattern(p).test(s), `${p} on ${JSON.stringify(s)}`).toBe(new RegExp(p, "u").test(s));
  });

  it("agrees with JavaScript on generated patterns and inputs (property)", () => {
    const atom = fc.constantFrom("a", "b", ".", "\\s", "\\S", "\\d", "\\w", "\\W", "[ab]", "[^a]", "[\\s\\d]", "[^\\S]", "\\.", "é", "😀", "\\u00a0", "\\b");
    const quant = fc.constantFrom("", "", "*", "+", "?", "{1,2}", "{2}", "*?");
    const piece = fc.tuple(atom, quant).map(([a, q]) => (a === "\\b" ? a : a + q));
    const seq = fc.array(piece, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(""));
    const group = fc.array(seq, { minLength: 1, maxLength: 3 }).map((alts) => alts.join("|"));
    const pattern = fc.tuple(fc.boolean(), group, fc.constantFrom("", "(?:x)?", "+", "*"), seq, fc.boolean()).map(
      ([start, g, gq, tail, end]) => `${start ? "^" : ""}(?:${g})${gq === "(?:x)?" ? "" : gq}${tail}${end ? "$" : ""}`,
    );
    const input = fc.array(fc.constantFrom("a", "b", " ", "\u00a0", "\n", "\r", "\u2028", "1", "_", "é", "😀", ".", "x"), { maxLength: 8 }).map((cs) => cs.join(""));
    fc.assert(
      fc.property(pattern, fc.array(input, { minLength: 1, maxLength: 5 }), (p, inputs) => {
        const linear = compilePattern(p);
        const native = new RegExp(p, "u");
        for (const s of inputs) expect(linear.test(s), `${p} on ${JSON.stringify(s)}`).toBe(native.test(s));
      }),
      { numRuns: 400 },
    );
  });
});

describe("ajv with the linear engine (code.regExp), as a payload check runs it", () => {
  const ajv = new Ajv({ code: { regExp: linearRegExp }, allowMatchingProperties: true });

  it("validates 10,000-character payloads against chained repeats in pattern, patternProperties and propertyNames", () => {
    const validate = ajv.compile({
      type: "object",
      properties: { q: { type: "string", pattern: "^[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*!$" } },
      patternProperties: { "^a*a*a*a*a*a*b$": { type: "integer" } },
      propertyNames: { pattern: "^(a+)+b?$|^q$" },
      additionalProperties: false,
    });
    const long = "a".repeat(10_000);
    expect(validate({ q: long })).toBe(false);
    expect(validate({ q: `${long.slice(1)}!` })).toBe(true);
    expect(validate({ [long]: 1 })).toBe(false); // no pattern property matches: additionalProperties
    expect(validate({ [`${long.slice(1)}b`]: 1 })).toBe(true);
    expect(validate({ [`${long.slice(1)}b`]: "x" })).toBe(false);
  });

  it("keeps two patterns of one schema apart", () => {
    const validate = ajv.compile({ type: "object", properties: { a: { type: "string", pattern: "^a$" }, b: { type: "string", pattern: "^b$" } } });
    expect(validate({ a: "a", b: "b" })).toBe(true);
    expect(validate({ a: "a", b: "a" })).toBe(false);
  });
});
