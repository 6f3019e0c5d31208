/**
 * Named schema refs (PROTOCOL.md section 11.1), pure: finding them where schemas go, and
 * inlining them. The property: resolving any acyclic tree of refs gives what inlining by hand
 * gives, and never changes its input. Then the edges: refs beside other keywords, `$schema`
 * below the root, data keywords, missing schemas (refused or kept), cycles, and refs that fan
 * out past the node budget in bounded work.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findRefs, namedRef, resolveRefs, type SchemaSource } from "../../../../src/domain/schemas/schema-refs.js";

const BIG = { maxNodes: 100_000, missing: "fail" as const };
const sourceOf = (schemas: Record<string, unknown>): SchemaSource => (name, version) => schemas[`${name}:${version}`];

/** Schema i uses only schemas j < i: acyclic by construction. */
type Tree = { kind: "leaf"; type: string } | { kind: "ref"; to: number } | { kind: "object"; props: Array<[string, Tree]> } | { kind: "array"; items: Tree } | { kind: "anyOf"; of: Tree[] };

const treeArb = (refs: number): fc.Arbitrary<Tree> =>
  fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "xsmall", maxDepth: 4, withCrossShrink: true },
      fc.record({ kind: fc.constant("leaf" as const), type: fc.constantFrom("string", "number", "boolean", "integer") }),
      ...(refs > 0 ? [fc.record({ kind: fc.constant("ref" as const), to: fc.nat({ max: refs - 1 }) })] : []),
      fc.record({ kind: fc.constant("object" as const), props: fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), tie("tree")), { maxLength: 3, selector: ([k]) => k }) }),
      fc.record({ kind: fc.constant("array" as const), items: tie("tree") }),
      fc.record({ kind: fc.constant("anyOf" as const), of: fc.array(tie("tree"), { minLength: 1, maxLength: 2 }) }),
    ),
  })).tree;

const nameOf = (i: number) => `S${i}`;
function toSchema(t: Tree): unknown {
  switch (t.kind) {
    case "leaf":
      return { type: t.type };
    case "ref":
      return { $ref: `#${nameOf(t.to)}:1.0.${t.to}` };
    case "object":
      return { type: "object", properties: Object.fromEntries(t.props.map(([k, v]) => [k, toSchema(v)])), enum: [{ $ref: "#S0:1.0.0" }, 1] };
    case "array":
      return { type: "array", items: toSchema(t.items) };
    case "anyOf":
      return { anyOf: t.of.map(toSchema) };
  }
}

/** Inlining by hand, straight from the tree: each ref is the tree of the schema it names. */
function byHand(t: Tree, trees: readonly Tree[]): unknown {
  switch (t.kind) {
    case "leaf":
      return { type: t.type };
    case "ref":
      return byHand(trees[t.to]!, trees);
    case "object":
      // `enum` holds data: its $ref-looking object is never inlined.
      return { type: "object", properties: Object.fromEntries(t.props.map(([k, v]) => [k, byHand(v, trees)])), enum: [{ $ref: "#S0:1.0.0" }, 1] };
    case "array":
      return { type: "array", items: byHand(t.items, trees) };
    case "anyOf":
      return { anyOf: t.of.map((x) => byHand(x, trees)) };
  }
}

const fleetArb = fc.integer({ min: 1, max: 5 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => treeArb(i))));

describe("resolveRefs", () => {
  it("equals inlining by hand for any acyclic tree of refs, and leaves its input as it was", () => {
    fc.assert(
      fc.property(fleetArb, treeArb(5), (trees, root) => {
        const all = [...trees];
        const rootTree = mapRefs(root, all.length);
        const schemas = Object.fromEntries(all.map((t, i) => [`${nameOf(i)}:1.0.${i}`, toSchema(t)]));
        const input = toSchema(rootTree);
        const before = JSON.stringify([input, schemas]);
        const r = resolveRefs(input, sourceOf(schemas), BIG);
        expect("problem" in r ? r.problem : undefined).toBeUndefined();
        if ("problem" in r) return;
        expect(r.schema).toEqual(byHand(rootTree, all));
        expect(r.missing).toEqual([]);
        expect(JSON.stringify([input, schemas])).toBe(before);
      }),
      { numRuns: 100 },
    );
  });

  it("keeps the keywords beside a ref and adds the schema under allOf; drops $schema below the root only", () => {
    const address = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", required: ["city"] };
    const source = sourceOf({ "Address:1.0.0": address });
    expect(resolveRefs({ $ref: "#Address:1.0.0" }, source, BIG)).toMatchObject({ schema: address, refs: 1 });
    const nested = resolveRefs({ properties: { home: { $ref: "#Address:1.0.0", description: "where", allOf: [{ minProperties: 1 }] } } }, source, BIG);
    expect(nested).toMatchObject({ schema: { properties: { home: { description: "where", allOf: [{ minProperties: 1 }, { type: "object", required: ["city"] }] } } } });
  });

  it("walks schema positions only: const, default and examples hold data", () => {
    const schema = { const: { $ref: "#Gone:1.0.0" }, default: { $ref: "#Gone:1.0.0" }, examples: [{ $ref: "#Gone:1.0.0" }], "x-mcp-header": { $ref: "#Gone:1.0.0" } };
    expect(findRefs(schema).refs).toEqual([]);
    expect(resolveRefs(schema, sourceOf({}), BIG)).toMatchObject({ schema });
  });

  it("refuses a missing schema with its path, or keeps the ref and reports it", () => {
    const schema = { properties: { a: { items: { $ref: "#Gone:2.0.0" } } } };
    expect(resolveRefs(schema, sourceOf({}), BIG)).toEqual({ problem: { path: "properties.a.items", message: expect.stringMatching(/no schema Gone version 2\.0\.0/) } });
    const kept = resolveRefs(schema, sourceOf({}), { ...BIG, missing: "keep" });
    expect(kept).toEqual({ schema, missing: [{ name: "Gone", version: "2.0.0", path: "properties.a.items" }], refs: 0 });
  });

  it("refuses refs that form a cycle, naming it", () => {
    const source = sourceOf({ "A:1.0.0": { properties: { b: { $ref: "#B:1.0.0" } } }, "B:1.0.0": { items: { $ref: "#A:1.0.0" } } });
    const r = resolveRefs({ $ref: "#A:1.0.0" }, source, BIG);
    expect(r).toEqual({ problem: { path: "properties.b.items", message: expect.stringContaining("#A:1.0.0 -> #B:1.0.0 -> #A:1.0.0") } });
  });

  it("stops refs that fan out (each schema using the next twice) at the node budget", () => {
    const schemas: Record<string, unknown> = { "D0:1.0.0": { type: "string" } };
    for (let i = 1; i <= 40; i++) schemas[`D${i}:1.0.0`] = { anyOf: [{ $ref: `#D${i - 1}:1.0.0` }, { $ref: `#D${i - 1}:1.0.0` }] };
    const r = resolveRefs({ $ref: "#D40:1.0.0" }, sourceOf(schemas), { maxNodes: 256, missing: "fail" });
    expect(r).toMatchObject({ problem: { message: expect.stringMatching(/more than 256 objects and arrays/) } });
  });

  it("refuses a ref of the named form whose version is not exact semver", () => {
    expect(namedRef({ $ref: "#A:^1.0.0" })).toEqual({ bad: expect.stringMatching(/not an exact semver version/) });
    expect(namedRef({ $ref: "#/definitions/a" })).toBeUndefined();
    expect(findRefs({ properties: { x: { $ref: "#A:1.0" } } }).problems).toEqual([{ path: "properties.x", message: expect.any(String) }]);
    expect(resolveRefs({ properties: { x: { $ref: "#A:1.0" } } }, sourceOf({}), BIG)).toMatchObject({ problem: { path: "properties.x" } });
  });
});

/** A root tree may refer to any of the `n` schemas; one generated for 5 is folded into range. */
function mapRefs(t: Tree, n: number): Tree {
  switch (t.kind) {
    case "ref":
      return { kind: "ref", to: t.to % n };
    case "object":
      return { kind: "object", props: t.props.map(([k, v]) => [k, mapRefs(v, n)]) };
    case "array":
      return { kind: "array", items: mapRefs(t.items, n) };
    case "anyOf":
      return { kind: "anyOf", of: t.of.map((x) => mapRefs(x, n)) };
    default:
      return t;
  }
}
