/**
 * Cards meant to hurt: deep nesting, enormous strings, prototype keys, thousands of bad
 * values, a skill schema with a remote `$ref`. Each is refused (or bounded) quickly with a
 * path, and nothing leaks out of the card.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { exportCard, importCard, MAX_CARD_BYTES, MAX_CARD_DEPTH, checkCardSchema } from "../../../../../src/domain/interop/a2a/index.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { importedSpec, loadCard } from "../../../a2a-fixtures.js";
import { thrownRegistryError } from "../../../registry-error.js";

/** Time any one hostile card may take; every case here takes a few milliseconds. */
const BOUND_MS = 1000;

function refusedQuickly(card: unknown): { path: string; message: string } {
  const started = performance.now();
  const error = thrownRegistryError(() => importCard(card, { agent_type: "hostile" }));
  expect(performance.now() - started).toBeLessThan(BOUND_MS);
  expect(error.code).toBe("invalid_card");
  expect(error.issues).toHaveLength(1);
  return error.issues![0]!;
}

const nested = (levels: number): unknown => {
  let value: unknown = "leaf";
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

// The card schemas compile once, on first use: not part of any one card's time.
beforeAll(() => {
  checkCardSchema({}, "1.0");
  checkCardSchema({}, "0.3");
});

describe("hostile cards", () => {
  it("refuses 200-deep nesting at the path where it crosses the limit", () => {
    const card = loadCard("v1_0-valid");
    card["capabilities"].extensions[0].params = nested(200);
    const issue = refusedQuickly(card);
    expect(issue.message).toBe(`nests more than ${MAX_CARD_DEPTH} levels deep; the limit is ${MAX_CARD_DEPTH}`);
    expect(issue.path).toMatch(/^a2a_card\.capabilities\.extensions\.0\.params(\.a)+$/);
  });

  it("refuses 100,000-deep nesting without overflowing the stack", () => {
    const text = `{"name":"n","skills":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    expect(refusedQuickly(JSON.parse(text)).message).toMatch(/nests more than 64/);
  });

  it("refuses a 10 MB string", () => {
    const card = { ...loadCard("v1_0-valid"), description: "x".repeat(10 * 1024 * 1024) };
    expect(refusedQuickly(card)).toEqual({ path: "a2a_card.description", message: `the card is larger than ${MAX_CARD_BYTES} bytes as JSON; the limit is ${MAX_CARD_BYTES}` });
  });

  it("refuses a card over the size limit made of many small strings", () => {
    const card = loadCard("v1_0-valid");
    card["skills"][0].examples = Array.from({ length: 40_000 }, (_, i) => `example number ${i} of a great many`);
    expect(refusedQuickly(card).message).toMatch(/larger than 1048576 bytes/);
  });

  it("refuses __proto__ and constructor keys at any depth, and pollutes nothing", () => {
    const top = JSON.parse(`{"name":"n","__proto__":{"polluted":true},"skills":[]}`);
    expect(refusedQuickly(top)).toEqual({ path: "a2a_card.__proto__", message: 'the key "__proto__" is not allowed' });
    const deep = loadCard("v1_0-valid");
    deep["skills"][1] = JSON.parse(`{"id":"x","name":"x","description":"d","tags":[],"__proto__":{"isAdmin":true}}`);
    expect(refusedQuickly(deep).path).toBe("a2a_card.skills.1.__proto__");
    const ctor = loadCard("v1_0-valid");
    ctor["capabilities"].extensions[0].params = { constructor: { prototype: { polluted: true } } };
    expect(refusedQuickly(ctor).path).toBe("a2a_card.capabilities.extensions.0.params.constructor");
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(({} as Record<string, unknown>)["isAdmin"]).toBeUndefined();
  });

  it("refuses 100,000 skills before checking any of them", () => {
    const card = { ...loadCard("v1_0-valid"), skills: Array.from({ length: 100_000 }, () => ({})) };
    expect(refusedQuickly(card)).toEqual({ path: "a2a_card.skills", message: "100000 skills; the limit is 256 (one capability each)" });
  });

  it("bounds the warnings of 10,000 wrong values, and is quick about it", () => {
    const card = loadCard("v1_0-valid");
    card["defaultInputModes"] = Array.from({ length: 10_000 }, (_, i) => i);
    const started = performance.now();
    const { warnings } = importCard(card, { agent_type: "hostile" });
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    expect(warnings).toHaveLength(21);
    expect(warnings[0]).toBe("a2a_card.defaultInputModes.0: must be a string (A2A v1.0)");
    expect(warnings[20]).toBe("and 9980 more warnings about a2a_card");
  });

  it("imports a skill schema with a remote $ref, which the spec's schema check then refuses", () => {
    const card = loadCard("sbom");
    card["skills"][0].inputSchema = { type: "object", properties: { sku: { $ref: "https://evil.example.test/schema.json" } } };
    const { spec } = importCard(card, { agent_type: "hostile", strict: true });
    const error = thrownRegistryError(() => validateSpec(spec, new SchemaChecker()));
    expect(error.code).toBe("invalid_spec");
    expect(error.issues).toEqual([{ path: "capabilities.0.input_schema", message: expect.stringMatching(/schema does not compile: .*evil\.example\.test/) }]);
  });
});

describe("exporting a spec whose stored card is hostile", () => {
  it("ignores a card it cannot safely read and builds the card from the spec", () => {
    const spec = importedSpec(loadCard("v1_0-valid"));
    // Set after parsing: a store record or another writer could hold what the spec schema would have cleaned.
    for (const a2a_card of [nested(200) as Record<string, unknown>, JSON.parse(`{"name":"n","__proto__":{"x":1}}`), { name: "y".repeat(MAX_CARD_BYTES + 1) }]) {
      const hostile = { ...spec, a2a_card };
      for (const version of ["1.0", "0.3"] as const) {
        const card = exportCard(hostile, version);
        expect(checkCardSchema(card, version)).toEqual([]);
        expect(card["name"]).toBe("Route Planner");
      }
    }
  });
});
