import { afterEach, describe, expect, it, vi } from "vitest";
import { Ajv } from "ajv";
import { RegistryError } from "../../../../src/domain/errors.js";
import { MAX_PATTERN_LENGTH, MAX_SCHEMA_BYTES, SchemaChecker } from "../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../src/domain/spec/validation.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("SchemaChecker", () => {
  const checker = new SchemaChecker();

  it("accepts schemas that compile, {} and booleans", () => {
    expect(checker.check({})).toBeNull();
    expect(checker.check(true)).toBeNull();
    expect(checker.check(false)).toBeNull();
    expect(
      checker.check({
        type: "object",
        properties: { query: { type: "string", minLength: 1, pattern: "^[a-z ]+$" }, limit: { type: "integer", minimum: 1 } },
        required: ["query"],
        additionalProperties: false,
      }),
    ).toBeNull();
    expect(checker.check({ $defs: { node: { type: "string" } }, type: "array", items: { $ref: "#/$defs/node" } })).toBeNull();
    expect(checker.check({ type: "string", format: "email" })).toBeNull();
  });

  it("refuses a remote $ref (nothing is fetched)", () => {
    expect(checker.check({ $ref: "https://example.com/schemas/order.json" })).toMatch(/can't resolve reference/);
    expect(checker.check({ type: "object", properties: { a: { $ref: "other.json#/defs/a" } } })).toMatch(/can't resolve reference/);
  });

  it("refuses a local $ref that points nowhere", () => {
    expect(checker.check({ $ref: "#/$defs/missing" })).toMatch(/can't resolve reference/);
  });

  it("accepts a self-referencing $ref in a schema with an $id", () => {
    expect(checker.check({ $id: "https://example.com/tree.json", type: "object", properties: { child: { $ref: "#" } } })).toBeNull();
  });

  it("accepts a self-referencing $ref: '#' (recursive schemas) without an $id", () => {
    expect(checker.check({ type: "object", properties: { child: { $ref: "#" } } })).toBeNull();
  });

  it("refuses unknown keywords (strict mode) and invalid keyword values", () => {
    expect(checker.check({ type: "string", maxLenght: 3 })).toMatch(/unknown keyword: "maxLenght"/);
    expect(checker.check({ type: "nope" })).toMatch(/schema is invalid/);
  });

  it("does not enable $data references", () => {
    expect(checker.check({ $data: "/limit" })).toMatch(/unknown keyword: "\$data"/);
    const relative = {
      type: "object",
      properties: { min: { type: "number" }, value: { type: "number", minimum: { $data: "1/min" } } },
    };
    expect(checker.check(relative)).toMatch(/minimum must be number/);
  });

  it("compiles patterns for the linear-time engine and refuses what it cannot run, with the path", () => {
    expect(checker.check({ type: "string", pattern: "^(a+)+$" })).toBeNull();
    expect(checker.check({ type: "object", patternProperties: { "^(k+)+$": {} } })).toBeNull();
    expect(checker.verdict({ type: "object", properties: { deep: { type: "string", pattern: "(?=x)y" } } })).toEqual({
      path: "properties.deep.pattern",
      message: expect.stringMatching(/^pattern "\(\?=x\)y" cannot be matched in linear time/),
    });
    expect(checker.verdict({ type: "object", patternProperties: { "^ok$": {}, "(a)\\1": {} } })?.path).toBe("patternProperties");
    // Patterns that ajv itself would skip (an unreferenced definition) are checked too; data is not a schema.
    expect(checker.verdict({ $defs: { unused: { pattern: "(?<=a)" } } })?.path).toBe("$defs.unused.pattern");
    expect(checker.check({ const: { pattern: "(?<=a)" }, examples: [{ pattern: "(?<=a)" }] })).toBeNull();
    expect(checker.check({ type: "string", pattern: "a".repeat(MAX_PATTERN_LENGTH + 1) })).toMatch(/the limit is 512/);
    expect(checker.check({ type: "string", pattern: "^(ab)+[a-z]*$" })).toBeNull();
  });

  it("refuses a schema over the size limit", () => {
    const huge = { type: "object", description: "x".repeat(MAX_SCHEMA_BYTES) };
    expect(JSON.stringify(huge).length).toBeGreaterThan(MAX_SCHEMA_BYTES);
    expect(checker.check(huge)).toMatch(/the limit is 65536/);
  });

  it("caches verdicts by the schema's text", () => {
    const fresh = new SchemaChecker();
    const compile = vi.spyOn(Ajv.prototype, "compile");
    const schema = { type: "object", properties: { a: { type: "integer", minimum: 0 } } };
    expect(fresh.check(schema)).toBeNull();
    expect(fresh.check(structuredClone(schema))).toBeNull();
    expect(fresh.check({ type: "string", bogus: true })).toMatch(/unknown keyword/);
    const reason = fresh.check({ type: "string", bogus: true });
    expect(reason).toMatch(/unknown keyword/);
    expect(compile).toHaveBeenCalledTimes(2);
    const started = performance.now();
    for (let i = 0; i < 2000; i++) fresh.check(schema);
    expect(performance.now() - started).toBeLessThan(500);
    expect(compile).toHaveBeenCalledTimes(2);
  });
});

describe("validateSpec", () => {
  const checker = new SchemaChecker();
  const cap = (name: string, extra: Record<string, unknown> = {}) => ({ name, description: name, input_schema: {}, output_schema: {}, ...extra });
  const raw = (extra: Record<string, unknown> = {}) => ({
    agent_type: "alpha",
    version: "1.0.0",
    description: "alpha agent",
    owner_team: "team",
    capabilities: [cap("a.one")],
    nats_subject: "tasks.alpha",
    consumer_group: "alpha",
    ...extra,
  });

  function issuesOf(input: unknown): Array<{ path: string; message: string }> {
    try {
      validateSpec(input, checker);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "invalid_spec") return [...(e.issues ?? [])];
      throw e;
    }
    throw new Error("expected invalid_spec");
  }

  it("returns the spec with defaults and no warnings when it is valid", () => {
    const { spec, warnings } = validateSpec(raw(), checker);
    expect(spec).toMatchObject({ max_concurrent_tasks: 10, supported_patterns: ["coordinator_managed"], tenant_scope: null, weight: 1 });
    expect(spec.capabilities[0]).toMatchObject({ tags: [], examples: [] });
    expect(warnings).toEqual([]);
  });

  it("names a schema that does not compile by its path", () => {
    const issues = issuesOf(raw({ capabilities: [cap("a.one"), cap("a.two", { input_schema: { type: "string", nope: 1 } })] }));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe("capabilities.1.input_schema");
    expect(issues[0]?.message).toMatch(/schema does not compile/);
    expect(issuesOf(raw({ capabilities: [cap("a.one", { output_schema: { $ref: "http://evil/x" } })] }))[0]?.path).toBe("capabilities.0.output_schema");
  });

  it("names a pattern the linear-time engine cannot run by its path inside the schema", () => {
    const input_schema = { type: "object", properties: { q: { type: "string", pattern: "^(?!admin)" } } };
    const issues = issuesOf(raw({ capabilities: [cap("a.one", { input_schema })] }));
    expect(issues).toEqual([{ path: "capabilities.0.input_schema.properties.q.pattern", message: expect.stringMatching(/^schema does not compile: pattern "\^\(\?!admin\)" cannot be matched in linear time/) }]);
  });

  it("names a duplicate capability and where it was first declared", () => {
    const issues = issuesOf(raw({ capabilities: [cap("a.one"), cap("a.two"), cap("a.one")] }));
    expect(issues).toEqual([{ path: "capabilities.2.name", message: 'duplicate capability name "a.one" (also at capabilities.0)' }]);
  });

  it("reports shape errors with their paths", () => {
    const paths = issuesOf(raw({ version: "one", capabilities: [cap("Bad Name")], owner_team: undefined })).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["version", "capabilities.0.name", "owner_team"]));
    expect(issuesOf("not an object")).toEqual([{ path: "", message: "expected an object" }]);
  });

  it("drops unknown fields and warns about them, never about managed fields", () => {
    const { spec, warnings } = validateSpec(raw({ colour: "blue", status: "ready", capabilities: [cap("a.one", { extra: 1 })] }), checker);
    expect(warnings).toEqual(["spec.colour: unknown field, not stored", "spec.capabilities.0.extra: unknown field, not stored"]);
    expect(spec).not.toHaveProperty("colour");
    expect(spec).not.toHaveProperty("status");
  });
});
