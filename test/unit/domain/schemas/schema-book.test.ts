/**
 * Named schemas in the view and through the write use cases, on the in-memory store: records
 * of `schemas.<name>.<version>` read as untrusted input, `used_by` kept as specs change, a put
 * that loses a create race answering as the winner's content, and a registration on a replica
 * whose view has not yet seen a schema put through another replica reading it from the store.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentKey, encodeRecord, schemaKey } from "../../../../src/domain/model/records.js";
import { encodeSchemaRecord, sameContent, type SchemaRecord } from "../../../../src/domain/schemas/schema-record.js";
import type { StoreEntry } from "../../../../src/domain/ports.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { SchemaRegistrar } from "../../../../src/service/registration/schema-registrar.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { SchemaResolution } from "../../../../src/service/queries/schema-resolution.js";
import { catchUp, makeSpec, registrarSettings } from "../../fixtures.js";

const record = (name: string, version: string, schema: unknown = { type: "string" }): SchemaRecord => ({ kind: "schema", name, version, schema: schema as SchemaRecord["schema"], description: "", created_at: 1 });
const put = (key: string, revision: number, value: Uint8Array): StoreEntry => ({ key, revision, operation: "PUT", value, created: revision });
const enc = new TextEncoder();

describe("the view's named schemas", () => {
  it("holds readable records, skips and reports others, and forgets a deleted one", () => {
    const view = new RegistryView();
    const problems: string[] = [];
    view.onUnreadable((key, _rev, problem) => problems.push(`${key}: ${problem}`));
    view.apply(put(schemaKey("Address", "1.0.0"), 1, encodeSchemaRecord(record("Address", "1.0.0"))));
    view.apply(put(schemaKey("Other", "1.0.0"), 2, encodeSchemaRecord(record("Address", "1.0.0"))));
    view.apply(put(schemaKey("Bad", "1.0.0"), 3, enc.encode('{"kind":"schema","name":"Bad","version":"1.0.0","schema":"x"}')));
    view.apply(put("schemas.Bad.1.0", 4, encodeSchemaRecord(record("Bad", "1.0"))));
    expect(view.namedSchemas.sorted().map((s) => `${s.name}:${s.version}@${s.revision}`)).toEqual(["Address:1.0.0@1"]);
    expect(problems).toEqual([
      "schemas.Other.1.0.0: name, version: not those of its key",
      "schemas.Bad.1.0.0: schema: not a JSON Schema (an object or a boolean)",
      expect.stringMatching(/^schemas\.Bad\.1\.0: key: not agents/),
    ]);
    const before = view.namedSchemas.generation;
    view.apply({ key: schemaKey("Address", "1.0.0"), revision: 5, operation: "DEL", value: new Uint8Array(), created: 5 });
    expect(view.namedSchemas.size).toBe(0);
    expect(view.namedSchemas.generation).toBeGreaterThan(before);
  });

  it("sorts versions in semver order and tracks the agent types whose spec uses each", () => {
    const view = new RegistryView();
    let rev = 0;
    for (const v of ["1.10.0", "1.2.0", "1.2.0-rc.1"]) view.apply(put(schemaKey("A", v), ++rev, encodeSchemaRecord(record("A", v))));
    expect(view.namedSchemas.sorted().map((s) => s.version)).toEqual(["1.2.0-rc.1", "1.2.0", "1.10.0"]);
    const withRef = makeSpec({ agent_type: "user", capabilities: [{ name: "u.run", description: "u", input_schema: { properties: { a: { $ref: "#A:1.2.0" } } }, output_schema: {} }] });
    view.apply(put(agentKey("user"), ++rev, encodeRecord({ kind: "agent", spec: withRef, registered_at: 1, updated_at: 1 })));
    expect([...view.namedSchemas.usedBy("A", "1.2.0")]).toEqual(["user"]);
    const without = makeSpec({ agent_type: "user", version: "2.0.0" });
    view.apply(put(agentKey("user"), ++rev, encodeRecord({ kind: "agent", spec: without, registered_at: 1, updated_at: 2 })));
    expect([...view.namedSchemas.usedBy("A", "1.2.0")]).toEqual([]);
  });

  it("compares content as JSON values: key order aside, the description included", () => {
    expect(sameContent({ schema: { a: 1, b: [1, { c: 2, d: 3 }] }, description: "" }, { schema: { b: [1, { d: 3, c: 2 }], a: 1 }, description: "" })).toBe(true);
    expect(sameContent({ schema: { a: [1, 2] }, description: "" }, { schema: { a: [2, 1] }, description: "" })).toBe(false);
    expect(sameContent({ schema: true, description: "x" }, { schema: true, description: "y" })).toBe(false);
  });
});

describe("puts and registrations across replicas", () => {
  const replica = (store: MemoryStore) => {
    const view = new RegistryView();
    const checker = new InlineSchemaChecks();
    const clock = { now: () => 1000 };
    return {
      view,
      schemas: new SchemaRegistrar({ store, view, checker, clock, maxSchemas: 100, bucketMaxBytes: 0 }),
      registrar: new Registrar({ store, view, checker, clock, settings: registrarSettings() }),
    };
  };

  it("of two replicas putting one version, the create lost answers as idempotent or conflict", async () => {
    const store = new MemoryStore();
    const [a, b] = [replica(store), replica(store)];
    const won = await a.schemas.put("Race", { version: "1.0.0", schema: { type: "string" } });
    expect(won.created).toBe(true);
    // b's view has not seen a's write: its create loses and it reads what won.
    expect(await b.schemas.put("Race", { version: "1.0.0", schema: { type: "string" } })).toEqual({ name: "Race", version: "1.0.0", created: false, revision: won.revision });
    const other = await b.schemas.put("Race", { version: "1.0.0", schema: { type: "number" } }).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(RegistryError);
    expect(other).toMatchObject({ code: "conflict" });
  });

  it("counts new versions against REGISTRY_MAX_SCHEMAS as the store holds them, not as a lagging view does", async () => {
    const store = new MemoryStore();
    const view = new RegistryView();
    const clock = { now: () => 1000 };
    const schemas = new SchemaRegistrar({ store, view, checker: new InlineSchemaChecks(), clock, maxSchemas: 2, bucketMaxBytes: 0, catchUp: () => catchUp(store, view) });
    await schemas.put("Filler", { version: "1.0.0", schema: { type: "integer" } });
    await schemas.put("Filler", { version: "1.0.1", schema: { type: "integer" } });
    // Neither put has reached the view by itself; the limit is still the store's count.
    const over = await schemas.put("Filler", { version: "1.0.2", schema: { type: "integer" } }).catch((e: unknown) => e);
    expect(over).toMatchObject({ code: "limit_exceeded" });
    expect(await store.get(schemaKey("Filler", "1.0.2"))).toBeNull();
    expect(await schemas.put("Filler", { version: "1.0.0", schema: { type: "integer" } })).toMatchObject({ created: false });
  });

  it("registers a spec whose ref its view has not seen yet, reading the schema from the store", async () => {
    const store = new MemoryStore();
    const [a, b] = [replica(store), replica(store)];
    await a.schemas.put("Fresh", { version: "1.0.0", schema: { type: "object", required: ["id"] } });
    const spec = makeSpec({ agent_type: "fresh-user", capabilities: [{ name: "f.run", description: "f", input_schema: { $ref: "#Fresh:1.0.0" }, output_schema: {} }] });
    const reply = await b.registrar.register("fresh-user", { spec });
    await catchUp(store, b.view);
    expect(b.view.get("fresh-user")?.spec.capabilities[0]?.input_schema).toEqual({ $ref: "#Fresh:1.0.0" });
    expect(reply.version).toBe("1.0.0");
    const missing = await b.registrar.register("fresh-user", { spec: { ...spec, version: "1.0.1", capabilities: [{ ...spec.capabilities[0]!, input_schema: { $ref: "#Fresh:9.0.0" } }] } }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: "invalid_spec", issues: [{ path: "capabilities.0.input_schema" }] });
  });
});

describe("SchemaResolution (what queries serve)", () => {
  it("inlines once per set of schemas, keeps a missing ref and reports it, and refuses to check against either", () => {
    const view = new RegistryView();
    const missing: string[] = [];
    const logged: string[] = [];
    const resolution = new SchemaResolution(view.namedSchemas, { onMissing: (r) => missing.push(`${r.name}:${r.version}`), onProblem: (m) => logged.push(m) });
    const schema = { properties: { a: { $ref: "#A:1.0.0" } } };
    expect(resolution.schema(schema)).toBe(schema);
    expect(missing).toEqual(["A:1.0.0"]);
    expect(() => resolution.forCheck(schema)).toThrow(/A version 1\.0\.0.*missing from the store/);
    // Served again from the cache: counted once per schema and set of schemas, logged once.
    resolution.schema(schema);
    expect(missing).toHaveLength(1);
    view.apply(put(schemaKey("A", "1.0.0"), 1, encodeSchemaRecord(record("A", "1.0.0", { type: "integer" }))));
    expect(resolution.schema(schema)).toEqual({ properties: { a: { type: "integer" } } });
    expect(resolution.forCheck(schema)).toBe(resolution.schema(schema));
    // A cycle can only come from records written by hand: served as stored, logged, never checked against.
    view.apply(put(schemaKey("B", "1.0.0"), 2, encodeSchemaRecord(record("B", "1.0.0", { items: { $ref: "#C:1.0.0" } }))));
    view.apply(put(schemaKey("C", "1.0.0"), 3, encodeSchemaRecord(record("C", "1.0.0", { items: { $ref: "#B:1.0.0" } }))));
    const cyclic = { $ref: "#B:1.0.0" };
    expect(resolution.schema(cyclic)).toBe(cyclic);
    expect(() => resolution.forCheck(cyclic)).toThrow(/cannot be resolved.*cycle/);
    expect(logged).toEqual([expect.stringMatching(/missing from the store/), expect.stringMatching(/cannot be resolved/)]);
  });
});
