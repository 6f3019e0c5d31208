/**
 * Capability schemas meant to hurt (issue 6): enormous, deep, cyclic, self-referencing,
 * remote `$ref`s, backtracking patterns, enormous enums. Each is refused or compiled, never
 * hangs or throws; the time each took is printed so the docs can quote it, not asserted: on a
 * shared machine a busy core made a 1.5 s bound fail (the service bounds a compile with the
 * worker pool's REGISTRY_SCHEMA_CHECK_TIMEOUT_MS, which test/unit/service/registration/schema-checks.test.ts
 * checks).
 */
import { afterAll, describe, expect, it } from "vitest";
import { MAX_PATTERN_LENGTH, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, SchemaChecker } from "../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../src/domain/spec/validation.js";
import { COMPILES_PER_INSTANCE, SchemaCompiler } from "../../../../src/domain/spec/schema-compiler.js";
import { RegistryError } from "../../../../src/domain/errors.js";

const timings: Array<{ name: string; ms: number; verdict: string }> = [];

function timed(name: string, schema: unknown, checker = new SchemaChecker()): string | null {
  const started = performance.now();
  const verdict = checker.check(schema);
  const ms = performance.now() - started;
  timings.push({ name, ms, verdict: verdict ?? "accepted" });
  return verdict;
}

afterAll(() => {
  const rows = timings.map((t) => `  ${t.name.padEnd(36)} ${t.ms.toFixed(1).padStart(7)} ms  ${t.verdict.slice(0, 70)}`);
  console.log(`schema checks, time each took:\n${rows.join("\n")}`);
});

const properties = (n: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string", minLength: 1 }])) });
const nested = (levels: number): Record<string, unknown> => {
  let s: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) s = { type: "object", properties: { a: s } };
  return s;
};

describe("enormous schemas", () => {
  it("refuses a schema over 64 KiB of text", () => {
    expect(timed("64 KiB+ of text", { type: "string", description: "x".repeat(70_000) })).toMatch(/the limit is 65536/);
  });

  it("refuses more nodes than the limit before compiling (compile time grows faster than linearly)", () => {
    expect(timed("5,000 properties", properties(5000))).toMatch(new RegExp(`the limit is ${MAX_SCHEMA_NODES}`));
    expect(timed("allOf of 2,000", { allOf: Array.from({ length: 2000 }, (_, i) => ({ minLength: i })) })).toMatch(/objects and arrays/);
  });

  it("counts boolean subschemas as nodes: 4,000 `false` patternProperties fit in 64 KiB", () => {
    const schema = { type: "object", patternProperties: Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`^p${i}$`, false])) };
    expect(timed("4,000 boolean patternProperties", schema)).toMatch(/boolean subschemas included/);
  });

  it("compiles the largest schemas under the limits", () => {
    expect(timed(`${MAX_SCHEMA_NODES - 2} properties`, properties(MAX_SCHEMA_NODES - 2))).toBeNull();
    expect(timed(`allOf of ${MAX_SCHEMA_NODES - 2}`, { allOf: Array.from({ length: MAX_SCHEMA_NODES - 2 }, (_, i) => ({ minLength: i })) })).toBeNull();
    expect(timed("nested 30 levels", nested(30))).toBeNull();
  });

  it("compiles enormous enum, const and required arrays (one node each)", () => {
    expect(timed("enum of 12,000 numbers", { enum: Array.from({ length: 12_000 }, (_, i) => i) })).toBeNull();
    expect(timed("enum of 7,000 strings", { type: "string", enum: Array.from({ length: 7000 }, (_, i) => `v${i}`) })).toBeNull();
    expect(timed("required of 7,000 names", { type: "object", required: Array.from({ length: 7000 }, (_, i) => `r${i}`) })).toBeNull();
    expect(timed("const of 60 KB", { const: "x".repeat(60_000) })).toBeNull();
  });
});

describe("deep, cyclic and shared structures", () => {
  it("refuses nesting over the limit without a RangeError, however deep", () => {
    expect(timed(`nested ${MAX_SCHEMA_DEPTH / 2} schema levels`, nested(MAX_SCHEMA_DEPTH / 2))).toMatch(/levels deep/);
    expect(timed("nested 100,000 levels", nested(100_000))).toMatch(/levels deep/);
  });

  it("refuses an exponential graph of shared references before JSON.stringify sees it", () => {
    let s: unknown = { type: "string" };
    for (let i = 0; i < 60; i++) s = { anyOf: [s, s] };
    expect(timed("anyOf [s, s] x 60 (shared)", s)).toMatch(/objects and arrays|levels deep/);
  });

  it("refuses a cyclic object graph (in-process callers) instead of looping", () => {
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic["properties"] = { self: cyclic };
    expect(timed("cyclic object", cyclic)).toMatch(/objects and arrays|levels deep/);
  });
});

describe("$ref", () => {
  const laughs = (n: number) => {
    const defs: Record<string, unknown> = { d0: { type: "string", minLength: 1 } };
    for (let i = 1; i <= n; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    return { $defs: defs, $ref: `#/$defs/d${n}` };
  };

  it("accepts recursive schemas: $ref '#' and mutual recursion", () => {
    expect(timed("$ref '#'", { type: "object", properties: { child: { $ref: "#" } } })).toBeNull();
    const mutual = { $defs: { a: { properties: { b: { $ref: "#/$defs/b" } } }, b: { properties: { a: { $ref: "#/$defs/a" } } } }, $ref: "#/$defs/a" };
    expect(timed("mutual $ref a <-> b", mutual)).toBeNull();
  });

  it("refuses a $ref that only points to itself", () => {
    expect(timed("$ref cycle of 1", { $defs: { d0: { $ref: "#/$defs/d0" } }, $ref: "#/$defs/d0" })).not.toBeNull();
    const ring = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`d${i}`, { $ref: `#/$defs/d${(i + 1) % 100}` }]));
    expect(timed("$ref ring of 100", { $defs: ring, $ref: "#/$defs/d0" })).not.toBeNull();
  });

  it("compiles a doubling chain of $refs (billion laughs) in linear time, or refuses it", () => {
    expect(timed("doubling $ref chain x 30", laughs(30))).toBeNull();
    timed("doubling $ref chain x 80", laughs(80)); // near the node limit; either verdict
  });

  it("refuses remote $refs without fetching anything", () => {
    for (const ref of ["https://evil.example/x.json", "http://169.254.169.254/latest/meta-data", "file:///etc/passwd", "other.json#/defs/a"]) {
      expect(timed(`remote $ref ${ref.slice(0, 22)}`, { type: "object", properties: { a: { $ref: ref } } })).toMatch(/can't resolve reference/);
    }
    expect(timed("relative $ref under an $id", { $id: "https://a.example/b.json", properties: { x: { $ref: "c.json" } } })).toMatch(/can't resolve reference/);
  });

  it("forgets nested $ids between checks: one agent's $id never resolves another's $ref", () => {
    const checker = new SchemaChecker();
    expect(checker.check({ type: "object", properties: { a: { $id: "https://ids.example/leak.json", type: "string" } } })).toBeNull();
    expect(checker.check({ $ref: "https://ids.example/leak.json" })).toMatch(/can't resolve reference/);
    for (let i = 0; i < 2000; i++) checker.check({ properties: { a: { $id: `https://ids.example/${i}.json`, type: "string" } } });
    const refs = (checker as unknown as { compiler: { draft7: { refs: object } } }).compiler.draft7.refs;
    expect(Object.keys(refs).length).toBeLessThan(10);
  });
});

describe("patterns built to backtrack", () => {
  // Catastrophic for V8's backtracking engine, harmless for the linear-time one: accepted now,
  // and test/unit/domain/spec/linear-regexp.test.ts runs each on a hostile 10,000-character input.
  const linear = ["^(a+)+$", "(a|aa)*b", "(.*a){20}", "^(\\w*)*@", "(\\w+\\s?)*$", "^(\\s*,\\s*)+$", "(?:x+x+)+y", "(a{1,10}){1,10}", ".*a.*a.*a.*a.*b", "^a*a*a*a*a*a*b$", "^[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*!$"];
  // What no linear-time engine runs.
  const refused = ["^(?=.*[A-Z])(?=.*\\d).{8,}$", "^(?!x)", "(?<=a)b", "(a)\\1", "(?<q>a)\\k<q>"];

  it.each(linear)("accepts %s, as pattern and as patternProperties key (matched in linear time)", (pattern) => {
    expect(timed(`pattern ${pattern}`, { type: "string", pattern })).toBeNull();
    expect(new SchemaChecker().check({ type: "object", patternProperties: { [pattern]: {} } })).toBeNull();
  });

  it.each(refused)("refuses %s, naming where it is", (pattern) => {
    expect(timed(`pattern ${pattern}`, { type: "string", pattern })).toMatch(/^pattern: pattern .* cannot be matched in linear time/);
    expect(new SchemaChecker().check({ type: "object", patternProperties: { [pattern]: {} } })).toMatch(/^patternProperties: pattern .* cannot be matched in linear time/);
    expect(new SchemaChecker().check({ propertyNames: { pattern } })).toMatch(/^propertyNames\.pattern: /);
  });

  it("refuses over-long patterns and reports unparsable ones", () => {
    expect(timed("pattern over the length limit", { type: "string", pattern: "a".repeat(MAX_PATTERN_LENGTH + 1) })).toMatch(/the limit is 512/);
    expect(new SchemaChecker().check({ type: "string", pattern: "(unclosed" })).toMatch(/not an ECMA-262 regular expression/);
  });

  it("never runs a pattern with V8's engine while compiling, even against property names", () => {
    // ajv's strict mode would test every `properties` name against every patternProperties key
    // with a native RegExp; a name built against this pattern would hang the compilation.
    const schema = { type: "object", properties: { ["a".repeat(40)]: { type: "string" } }, patternProperties: { "^a*a*a*a*a*a*b$": {} } };
    expect(timed("properties name vs hostile patternProperties", schema)).toBeNull();
  });
});

describe("bounds per request and per replica", () => {
  it("checks a whole spec of 256 KiB full of the heaviest schemas, refusing none of them", () => {
    // Distinct schemas (no cache hit): each capability carries two at the node limit.
    const heavy = (seed: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES - 2 }, (_, i) => [`p${seed}_${i}`, { type: "string", minLength: 1 }])) });
    const capabilities = [];
    for (let i = 0; JSON.stringify(capabilities).length < 240 * 1024; i++) {
      capabilities.push({ name: `c.c${i}`, description: "", input_schema: heavy(2 * i), output_schema: heavy(2 * i + 1) });
    }
    const spec = { agent_type: "heavy", version: "1.0.0", description: "", owner_team: "t", nats_subject: "t.heavy", consumer_group: "heavy", capabilities };
    const started = performance.now();
    expect(() => validateSpec(spec, new SchemaChecker())).not.toThrow(RegistryError);
    const ms = performance.now() - started;
    console.log(`whole spec: ${capabilities.length * 2} schemas of ${MAX_SCHEMA_NODES - 2} nodes, ${Math.round(JSON.stringify(spec).length / 1024)} KiB, checked in ${ms.toFixed(0)} ms`);
  });

  it("keeps what ajv retains per compiled schema bounded: a fresh instance every COMPILES_PER_INSTANCE compilations", () => {
    // ajv keeps each compiled schema and pattern in its instance's code scope (`scope._values`)
    // for as long as the instance lives: 13 KB per RE2 pattern, 200 KB per schema at the node limit.
    const compiler = new SchemaCompiler();
    const retained = () => {
      const values = (compiler as unknown as { draft7: { scope: { _values: Record<string, Map<unknown, unknown>> } } }).draft7.scope._values;
      return { patterns: values["pattern"]?.size ?? 0, schemas: values["schema"]?.size ?? 0 };
    };
    let most = { patterns: 0, schemas: 0 };
    for (let i = 0; i < 3 * COMPILES_PER_INSTANCE; i++) {
      expect(compiler.compile({ type: "object", properties: { a: { type: "string", pattern: `^a*a*a*b${i}$` } }, patternProperties: { [`^k${i}$`]: { type: "integer" } } })).toBeNull();
      const now = retained();
      most = { patterns: Math.max(most.patterns, now.patterns), schemas: Math.max(most.schemas, now.schemas) };
    }
    expect(most.patterns).toBeGreaterThan(0);
    expect(most.patterns).toBeLessThanOrEqual(2 * COMPILES_PER_INSTANCE);
    expect(most.schemas).toBeLessThanOrEqual(COMPILES_PER_INSTANCE + 10); // and the meta-schemas
  });

  it("keeps the verdict cache within its character budget", () => {
    const checker = new SchemaChecker();
    for (let i = 0; i < 300; i++) checker.check({ type: "string", description: `${i}`.padEnd(60_000, "x") });
    const chars = (checker as unknown as { cache: { cachedChars: number } }).cache.cachedChars;
    expect(chars).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(chars).toBeGreaterThan(0);
  });
});
