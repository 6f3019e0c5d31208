/**
 * Reuse of ref resolutions (issue 35, item 6): a stored schema is expanded once and reused
 * wherever it is met again, within one schema, across the schemas of one write, and across
 * writes and queries while the stored schemas stay the same. Counted, not timed: how often
 * a stored schema is looked up to be expanded. And what reuse must not change: results, the
 * node limit, cycles, and what a write read from outside the view.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { SchemaBook } from "../../../../src/domain/schemas/schema-book.js";
import { encodeSchemaRecord, type SchemaRecord } from "../../../../src/domain/schemas/schema-record.js";
import { ResolvedRefCache, WriteMemo } from "../../../../src/domain/schemas/resolved-ref-cache.js";
import { resolveRefs, type SchemaSource } from "../../../../src/domain/schemas/schema-refs.js";
import { schemaKey } from "../../../../src/domain/model/records.js";
import { resolveForWrite } from "../../../../src/service/queries/schema-refs.js";
import { SchemaResolution } from "../../../../src/service/queries/schema-resolution.js";
import type { JsonSchema } from "../../../../src/protocol/spec.js";

const CHAIN = 250;
const CAPABILITIES = 256;
const LIMITS = { maxNodes: 256, missing: "fail" as const };

/** C0 -> C1 -> ... -> C249, each only a ref to the next, the last a string. */
const chain = (): Record<string, unknown> => Object.fromEntries(Array.from({ length: CHAIN }, (_, i) => [`C${i}:1.0.0`, i === CHAIN - 1 ? { type: "string", minLength: 1 } : { $ref: `#C${i + 1}:1.0.0` }]));

/** A spec's schemas: every capability's input is the chain, its output an object holding it. */
const capabilitySchemas = (): unknown[] => Array.from({ length: CAPABILITIES }, (_, i) => [{ $ref: "#C0:1.0.0" }, { type: "object", description: `cap ${i}`, properties: { x: { $ref: "#C0:1.0.0" } } }]).flat();

/** A source over `schemas` that counts its lookups. */
function counted(schemas: Record<string, unknown>): { source: SchemaSource; lookups: () => number } {
  let n = 0;
  return {
    source: (name, version) => {
      n++;
      return schemas[`${name}:${version}`];
    },
    lookups: () => n,
  };
}

function bookOf(schemas: Record<string, unknown>): SchemaBook {
  const book = new SchemaBook();
  let revision = 0;
  for (const [key, schema] of Object.entries(schemas)) {
    const [name, version] = key.split(":") as [string, string];
    const record: SchemaRecord = { kind: "schema", name, version, schema: schema as SchemaRecord["schema"], description: "", created_at: 0 };
    book.apply(name, version, { key: schemaKey(name, version), revision: ++revision, operation: "PUT", value: encodeSchemaRecord(record), created: 0 });
  }
  return book;
}

afterEach(() => vi.restoreAllMocks());

describe("resolveRefs with a memo", () => {
  it("expands a 250-deep chain once for 256 capabilities, not once per schema, with the same results", () => {
    const schemas = capabilitySchemas();
    const plain = counted(chain());
    const without = schemas.map((s) => resolveRefs(s, plain.source, LIMITS));
    expect(plain.lookups()).toBe(schemas.length * CHAIN);

    const reused = counted(chain());
    const cache = new ResolvedRefCache({ generation: 0 });
    const memo = cache.shared();
    const withMemo = schemas.map((s) => resolveRefs(s, reused.source, { ...LIMITS, memo }));
    expect(reused.lookups()).toBe(CHAIN);
    expect(withMemo).toEqual(without);
    expect(withMemo[1]).toMatchObject({ schema: { properties: { x: { type: "string", minLength: 1 } } }, refs: CHAIN });
  });

  it("counts a reused expansion's nodes against the limit, and still refuses cycles", () => {
    // Each schema uses the next twice: the memo makes it cheap to walk, not smaller.
    const fan: Record<string, unknown> = { "D0:1.0.0": { type: "string" } };
    for (let i = 1; i <= 40; i++) fan[`D${i}:1.0.0`] = { anyOf: [{ $ref: `#D${i - 1}:1.0.0` }, { $ref: `#D${i - 1}:1.0.0` }] };
    const memo = new ResolvedRefCache({ generation: 0 }).shared();
    const source = counted(fan);
    expect(resolveRefs({ $ref: "#D40:1.0.0" }, source.source, { ...LIMITS, memo })).toMatchObject({ problem: { message: expect.stringMatching(/more than 256 objects and arrays/) } });
    expect(source.lookups()).toBeLessThanOrEqual(41);

    const cyclic = { "A:1.0.0": { properties: { b: { $ref: "#B:1.0.0" } } }, "B:1.0.0": { items: { $ref: "#A:1.0.0" } }, "L:1.0.0": { type: "string" } };
    const memo2 = new ResolvedRefCache({ generation: 0 }).shared();
    expect(resolveRefs({ properties: { l: { $ref: "#L:1.0.0" } } }, counted(cyclic).source, { ...LIMITS, memo: memo2 })).not.toHaveProperty("problem");
    const r = resolveRefs({ $ref: "#A:1.0.0" }, counted(cyclic).source, { ...LIMITS, memo: memo2 });
    expect(r).toEqual({ problem: { path: "properties.b.items", message: expect.stringContaining("#A:1.0.0 -> #B:1.0.0 -> #A:1.0.0") } });
  });

  it("keeps no expansion with a missing schema in it, and a root that is only a ref keeps the stored $schema", () => {
    const memo = new ResolvedRefCache({ generation: 0 }).shared();
    const schemas = { "Holey:1.0.0": { properties: { g: { $ref: "#Gone:1.0.0" } } }, "Dialect:1.0.0": { $schema: "https://json-schema.org/draft/2020-12/schema", type: "integer" } };
    const keep = { maxNodes: 256, missing: "keep" as const, memo };
    const first = resolveRefs({ items: { $ref: "#Holey:1.0.0" } }, counted(schemas).source, keep);
    const again = resolveRefs({ items: { $ref: "#Holey:1.0.0" } }, counted(schemas).source, keep);
    expect(again).toEqual(first);
    expect(again).toMatchObject({ missing: [{ name: "Gone", path: "items.properties.g" }] });
    expect(resolveRefs({ items: { $ref: "#Dialect:1.0.0" } }, counted(schemas).source, keep)).toMatchObject({ schema: { items: { type: "integer" } } });
    expect(resolveRefs({ items: { $ref: "#Dialect:1.0.0" } }, counted(schemas).source, keep)).not.toHaveProperty("schema.items.$schema");
    expect(resolveRefs({ $ref: "#Dialect:1.0.0" }, counted(schemas).source, keep)).toMatchObject({ schema: { $schema: expect.any(String), type: "integer" } });
  });
});

describe("ResolvedRefCache", () => {
  it("serves the next resolution without a lookup, until the set of stored schemas changes", () => {
    const book = { generation: 1 };
    const cache = new ResolvedRefCache(book);
    const first = counted(chain());
    resolveRefs({ $ref: "#C0:1.0.0" }, first.source, { ...LIMITS, memo: cache.shared() });
    expect(cache.size).toBe(CHAIN);
    const second = counted(chain());
    resolveRefs({ items: { $ref: "#C0:1.0.0" } }, second.source, { ...LIMITS, memo: cache.shared() });
    expect(second.lookups()).toBe(0);
    book.generation = 2; // a schema put, or one deleted by hand
    expect(cache.size).toBe(0);
    const third = counted(chain());
    resolveRefs({ items: { $ref: "#C0:1.0.0" } }, third.source, { ...LIMITS, memo: cache.shared() });
    expect(third.lookups()).toBe(CHAIN);
  });

  it("holds at most its node bound, dropping the oldest expansions first", () => {
    const cache = new ResolvedRefCache({ generation: 0 }, 1000);
    const memo = cache.shared();
    for (let i = 0; i < 600; i++) memo.set(`S${i}:1.0.0`, { schema: { type: "string" }, nodes: 1, refs: 1, dialect: false });
    expect(cache.size).toBe(500);
    expect(memo.get("S0:1.0.0")).toBeUndefined();
    expect(memo.get("S599:1.0.0")).toBeDefined();
    memo.set("Huge:1.0.0", { schema: {}, nodes: 5000, refs: 1, dialect: false });
    expect(memo.get("Huge:1.0.0")).toBeUndefined();
  });
});

describe("queries' resolution (SchemaResolution)", () => {
  it("reuses what a write expanded, and adds to it what it expands itself", async () => {
    const book = bookOf(chain());
    await resolveForWrite([{ $ref: "#C0:1.0.0" }], ["schema"], book, new MemoryStore());
    expect(book.resolved.size).toBe(CHAIN);
    const lookups = vi.spyOn(book, "source");
    const queries = new SchemaResolution(book);
    const schema = { type: "object", properties: { x: { $ref: "#C0:1.0.0" } } } as JsonSchema;
    expect(queries.schema(schema)).toEqual({ type: "object", properties: { x: { type: "string", minLength: 1 } } });
    expect(lookups).not.toHaveBeenCalled();
    // A schema no write used is expanded by the query, and kept for the next.
    const other = bookOf({ ...chain(), "Wrap:1.0.0": { items: { $ref: "#C0:1.0.0" } } });
    const otherLookups = vi.spyOn(other, "source");
    new SchemaResolution(other).schema({ $ref: "#Wrap:1.0.0" } as JsonSchema);
    expect(otherLookups).toHaveBeenCalledTimes(CHAIN + 1);
    expect(other.resolved.size).toBe(CHAIN + 1);
    otherLookups.mockClear();
    new SchemaResolution(other).schema({ anyOf: [{ $ref: "#Wrap:1.0.0" }] } as JsonSchema);
    expect(otherLookups).not.toHaveBeenCalled();
  });
});

describe("resolveForWrite", () => {
  it("expands the chain once for a spec of 256 capabilities, and not at all for the next write", async () => {
    const book = bookOf(chain());
    const store = new MemoryStore();
    const expansions = vi.spyOn(WriteMemo.prototype, "set");
    const schemas = capabilitySchemas();
    const paths = schemas.map((_, i) => `s${i}`);
    const first = await resolveForWrite(schemas, paths, book, store);
    expect(first).toHaveProperty("resolved");
    expect(expansions).toHaveBeenCalledTimes(CHAIN);
    expansions.mockClear();
    const second = await resolveForWrite(schemas, paths, book, store);
    expect(second).toEqual(first);
    expect(expansions).not.toHaveBeenCalled();
  });

  it("keeps to itself what it resolved from a schema read from the store, which the view has not applied", async () => {
    const schemas = chain();
    // The view holds all but the last link: a put through another replica it has not applied yet.
    delete schemas["C249:1.0.0"];
    const book = bookOf(schemas);
    const store = new MemoryStore();
    const last: SchemaRecord = { kind: "schema", name: "C249", version: "1.0.0", schema: { type: "string" }, description: "", created_at: 0 };
    await store.write(schemaKey("C249", "1.0.0"), encodeSchemaRecord(last), 0);
    const r = await resolveForWrite([{ $ref: "#C0:1.0.0" }], ["schema"], book, store);
    expect(r).toEqual({ resolved: [{ type: "string" }] });
    expect(book.resolved.size).toBe(0);
  });
});
