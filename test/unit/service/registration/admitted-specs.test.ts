/**
 * Specs validated once per text and agent type (service/registration/admitted-specs.ts): what is handed
 * back and when it may not be, and, through the registrar on the in-memory store, that a
 * repeated spec skips the schema checks while every refusal, every other text and every
 * change of the named schemas or of the stored spec is judged again.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { AdmittedSpecs, specDigest } from "../../../../src/service/registration/admitted-specs.js";
import { schemaKey } from "../../../../src/domain/model/records.js";
import { encodeSchemaRecord } from "../../../../src/domain/schemas/schema-record.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import type { SchemaChecks } from "../../../../src/domain/spec/validation.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { catchUp, makeSpec, registrarSettings } from "../../fixtures.js";
import { loadCard } from "../../a2a-fixtures.js";

describe("AdmittedSpecs", () => {
  const stored = { spec: makeSpec(), revision: 7 };
  const warnings = ["spec.extra: unknown field, not stored"];

  it("answers with the view's spec only while it is the record, the text and the named schemas it was found for", () => {
    const admitted = new AdmittedSpecs();
    admitted.remember("agent-a", "d1", 3, 7, { spec: stored.spec, warnings });
    expect(admitted.get("agent-a", "d1", 3, stored)).toEqual({ spec: stored.spec, warnings, a2aVersion: undefined });
    expect(admitted.get("agent-a", "d1", 3, stored)!.spec).toBe(stored.spec);
    expect(admitted.get("agent-a", "d2", 3, stored)).toBeUndefined();
    expect(admitted.get("agent-a", "d1", 4, stored)).toBeUndefined();
    expect(admitted.get("agent-a", "d1", 3, { ...stored, revision: 8 })).toBeUndefined();
    expect(admitted.get("agent-a", "d1", 3, undefined)).toBeUndefined();
    expect(admitted.get("agent-b", "d1", 3, stored)).toBeUndefined();
  });

  it("gives each caller a warnings list of its own, and forgets the oldest type past its bound", () => {
    const admitted = new AdmittedSpecs(2);
    admitted.remember("agent-a", "d1", 0, 7, { spec: stored.spec, warnings });
    admitted.get("agent-a", "d1", 0, stored)!.warnings.push("added by a caller");
    expect(admitted.get("agent-a", "d1", 0, stored)!.warnings).toEqual(warnings);
    admitted.remember("agent-b", "d1", 0, 7, { spec: stored.spec, warnings: [] });
    admitted.remember("agent-a", "d1", 0, 7, { spec: stored.spec, warnings });
    admitted.remember("agent-c", "d1", 0, 7, { spec: stored.spec, warnings: [] });
    expect(admitted.get("agent-b", "d1", 0, stored)).toBeUndefined();
    expect(admitted.get("agent-a", "d1", 0, stored)).toBeDefined();
    expect(admitted.get("agent-c", "d1", 0, stored)).toBeDefined();
  });

  it("digests texts that differ in one character apart", () => {
    expect(specDigest('{"a":1}')).not.toBe(specDigest('{"a":2}'));
    expect(specDigest('{"a":1}')).toBe(specDigest('{"a":1}'));
  });
});

describe("Registrar: a spec registered again is not validated again", () => {
  let store: MemoryStore;
  let view: RegistryView;
  let checks: number;
  let registrar: Registrar;

  const counting = (inner: SchemaChecks): SchemaChecks => ({
    checkAll: (schemas) => {
      checks++;
      return inner.checkAll(schemas);
    },
  });
  const raw = (extra: Record<string, unknown> = {}, schema: unknown = { type: "object", properties: { q: { type: "string" } } }) => ({
    agent_type: "alpha",
    version: "1.0.0",
    description: "alpha agent",
    owner_team: "team",
    capabilities: [{ name: "alpha.run", description: "runs", input_schema: schema, output_schema: {} }],
    nats_subject: "tasks.alpha",
    consumer_group: "alpha",
    ...extra,
  });
  const refusal = async (p: Promise<unknown>): Promise<RegistryError> => {
    const e = await p.then(() => null, (err: unknown) => err);
    if (e instanceof RegistryError) return e;
    throw new Error(`expected a RegistryError, got ${String(e)}`);
  };

  beforeEach(() => {
    store = new MemoryStore();
    view = new RegistryView();
    checks = 0;
    registrar = new Registrar({ store, view, checker: counting(new InlineSchemaChecks()), clock: { now: () => 1_000_000 }, settings: registrarSettings() });
  });

  it("checks the schemas of one spec text once, and answers each registration with the same warnings", async () => {
    const a = await registrar.register("alpha", { spec: raw({ extra: 1 }), instance_id: "i1" });
    await catchUp(store, view);
    const b = await registrar.register("alpha", { spec: raw({ extra: 1 }), instance_id: "i2" });
    expect(checks).toBe(1);
    expect(b.warnings).toEqual(a.warnings);
    expect(b.warnings).toEqual(["spec.extra: unknown field, not stored"]);
    // Another text is validated (and, being another spec under the same version, refused).
    const e = await refusal(registrar.register("alpha", { spec: raw({ description: "edited" }), instance_id: "i3" }));
    expect(e.code).toBe("conflict");
    expect(checks).toBe(2);
  });

  it("compares with the stored spec again once another replica has overwritten it", async () => {
    await registrar.register("alpha", { spec: raw(), instance_id: "i1" });
    await catchUp(store, view);
    const other = new Registrar({ store, view: new RegistryView(), checker: new InlineSchemaChecks(), clock: { now: () => 1_000_000 }, settings: registrarSettings() });
    await other.register("alpha", { spec: raw({ description: "edited" }), instance_id: "i2", replace: true });
    await catchUp(store, view);
    const e = await refusal(registrar.register("alpha", { spec: raw(), instance_id: "i3" }));
    expect(e.code).toBe("conflict");
    expect(e.message).toContain("description");
  });

  it("imports a card once too, and answers a repeat with the import's warnings and the card's A2A version", async () => {
    const card = loadCard("text-modes");
    const type = "text-modes-agent";
    const first = await registrar.register(type, { a2a_card: card, instance_id: "i1" });
    expect(first.warnings.length).toBeGreaterThan(0);
    await catchUp(store, view);
    const again = await registrar.register(type, { a2a_card: card, instance_id: "i2", metadata: { zone: "eu" } });
    expect(checks).toBe(1);
    expect(again.warnings).toEqual(first.warnings);
    expect(again.a2a_version).toBe(first.a2a_version);
    // A field that completes the card is part of what decides the spec: judged again.
    const e = await refusal(registrar.register(type, { a2a_card: card, owner_team: "other-team", instance_id: "i3" }));
    expect(e.code).toBe("conflict");
    expect(checks).toBe(2);
  });

  it("judges a refused spec again every time", async () => {
    const bad = raw({}, { type: "object", properties: { q: { type: "no-such-type" } } });
    for (let i = 0; i < 2; i++) expect((await refusal(registrar.register("alpha", { spec: bad }))).code).toBe("invalid_spec");
    expect(checks).toBe(2);
  });

  it("validates again once a named schema is deleted, and refuses the ref it no longer resolves", async () => {
    const record = { kind: "schema" as const, name: "Query", version: "1.0.0", schema: { type: "string" }, description: "", created_at: 1 };
    const put = await store.write(schemaKey("Query", "1.0.0"), encodeSchemaRecord(record), 0);
    await catchUp(store, view);
    const withRef = raw({}, { type: "object", properties: { q: { $ref: "#Query:1.0.0" } } });
    await registrar.register("alpha", { spec: withRef, instance_id: "i1" });
    await catchUp(store, view);
    await registrar.register("alpha", { spec: withRef, instance_id: "i2" });
    expect(checks).toBe(1);
    // Deleted by hand (the API never deletes a schema).
    await store.remove(schemaKey("Query", "1.0.0"), put);
    await catchUp(store, view);
    const e = await refusal(registrar.register("alpha", { spec: withRef, instance_id: "i3" }));
    expect(e.code).toBe("invalid_spec");
    expect(e.issues?.[0]?.path).toBe("capabilities.0.input_schema.properties.q");
  });
});
