/**
 * Per-agent-type budgets (domain/rate-limit.ts) and the spec validation budget the registrar
 * applies with them: a type that keeps sending specs with new schemas waits, others do not;
 * the time resolving their $refs takes is charged like compilation.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../src/adapters/memory/memory-store.js";
import { ErrorCode, RateLimitedError } from "../../../src/domain/errors.js";
import { TypeBudgets } from "../../../src/domain/rate-limit.js";
import type { SchemaChecks } from "../../../src/domain/spec/validation.js";
import { RegistryView } from "../../../src/domain/view/view.js";
import { Registrar, type RegistrarDeps } from "../../../src/service/registration/registrar.js";
import { agentKey, schemaKey } from "../../../src/domain/model/records.js";
import { encodeSchemaRecord } from "../../../src/domain/schemas/schema-record.js";
import { catchUp, registrarSettings } from "../fixtures.js";

describe("TypeBudgets", () => {
  it("allows a burst, then refuses with the wait until a token is back", () => {
    const b = new TypeBudgets(10, 20);
    for (let i = 0; i < 20; i++) expect(b.take("a", 1, 0)).toBe(0);
    expect(b.take("a", 1, 0)).toBe(100);
    expect(b.take("a", 1, 50)).toBe(50);
    expect(b.take("a", 1, 100)).toBe(0);
    // Other types have their own bucket.
    expect(b.take("b", 1, 100)).toBe(0);
  });

  it("refills at the rate up to the burst, never beyond", () => {
    const b = new TypeBudgets(10, 5);
    for (let i = 0; i < 5; i++) b.take("a", 1, 0);
    expect(b.waitMs("a", 60_000)).toBe(0);
    for (let i = 0; i < 5; i++) expect(b.take("a", 1, 60_000)).toBe(0);
    expect(b.take("a", 1, 60_000)).toBeGreaterThan(0);
  });

  it("lets work already done go into debt, which is then waited off", () => {
    const b = new TypeBudgets(100, 200); // 100 ms of work per second, 200 ms at once
    expect(b.waitMs("a", 0)).toBe(0);
    b.spend("a", 900, 0); // one expensive spec: 700 ms of debt
    expect(b.waitMs("a", 0)).toBe(7010);
    expect(b.waitMs("a", 7000)).toBeGreaterThan(0);
    expect(b.waitMs("a", 7020)).toBe(0);
  });

  it("keeps at most maxKeys buckets, dropping the least recently used", () => {
    const b = new TypeBudgets(1, 1, 100);
    for (let i = 0; i < 10_000; i++) b.take(`t${i}`, 1, 0);
    expect(b.size).toBe(100);
    expect(b.take("t9999", 1, 0)).toBeGreaterThan(0); // recent: still remembered
  });
});

describe("Registrar spec validation budget", () => {
  // Each salt is another spec, so another version (a version names one spec).
  const spec = (type: string, salt = 0) => ({
    agent_type: type,
    version: `1.0.${salt}`,
    description: "",
    owner_team: "t",
    capabilities: [{ name: `${type}.run`, description: "", input_schema: { type: "object", description: `${salt}` }, output_schema: {} }],
    nats_subject: `tasks.${type}`,
    consumer_group: type,
  });

  function registrar(now: { t: number }, deps: Partial<RegistrarDeps> = {}) {
    // A checker that reports 30 ms of compilation per schema, like large schemas compiling.
    const slow: SchemaChecks = { checkAll: async (schemas) => ({ verdicts: schemas.map(() => null), ms: 30 * schemas.length }) };
    return new Registrar({
      store: new MemoryStore(),
      view: new RegistryView(),
      checker: slow,
      clock: { now: () => now.t },
      settings: registrarSettings({ heartbeatSubject: (t, i) => `r.heartbeat.${t}.${i}`, prefix: "r" }),
      specBudget: new TypeBudgets(10, 50), // 10 ms per second, 50 ms at once
      ...deps,
    });
  }

  it("answers unavailable once a type spent its budget, and only that type", async () => {
    const now = { t: 0 };
    const r = registrar(now);
    await r.register("heavy", { spec: spec("heavy", 1) }); // 60 ms spent: 10 ms in debt
    const refused = await r.register("heavy", { spec: spec("heavy", 2) }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ code: ErrorCode.Unavailable, status: 503 });
    expect((refused as Error).message).toMatch(/agent type heavy used its spec validation budget \(10 ms per second\); retry in \d+ ms/);
    await expect(r.register("other", { spec: spec("other") })).resolves.toMatchObject({ agent_type: "other" });
    // Registry-file entries are the operator's, never limited.
    await expect(r.register("heavy", { spec: spec("heavy", 3) }, { static: true })).resolves.toMatchObject({ instance_id: "static" });
    now.t = 5_000;
    await expect(r.register("heavy", { spec: spec("heavy", 4) })).resolves.toMatchObject({ agent_type: "heavy" });
  });

  it("validates the spec once when the instances of a new agent type register at once, and charges it once", async () => {
    const now = { t: 0 };
    let compilations = 0;
    const counting: SchemaChecks = {
      checkAll: async (schemas) => {
        compilations++;
        await new Promise((r) => setTimeout(r, 5)); // still under way while the others arrive
        return { verdicts: schemas.map(() => null), ms: 30 * schemas.length };
      },
    };
    // The view follows the store as the service's feed makes it, so the instances after the
    // first find the type's spec and subject claim stored rather than racing to create them.
    const store = new MemoryStore();
    const view = new RegistryView();
    const r = registrar(now, { checker: counting, store, view, catchUp: () => catchUp(store, view) });
    // 60 ms of compilation against a 50 ms burst: a second validation would be refused.
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => r.register("rollout", { spec: spec("rollout", 7), instance_id: `i${i}` })));
    expect(replies.map((x) => x.instance_id).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `i${i}`).sort());
    expect(compilations).toBe(1);
    // Another spec of the same type is still charged: the budget was spent once, and is spent now.
    await expect(r.register("rollout", { spec: spec("rollout", 8) })).rejects.toMatchObject({ code: ErrorCode.Unavailable });
  });

  it("shares an invalid spec's refusal with every registration of the same text under way", async () => {
    const r = registrar({ t: 0 });
    const bad = { ...spec("broken", 1), capabilities: [] };
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => r.register("broken", { spec: bad, instance_id: `b${i}` }).then(() => "stored", (e: { code?: string }) => e.code)));
    expect(results).toEqual(Array.from({ length: 5 }, () => "invalid_spec"));
  });

  it("charges the time resolving $refs takes, and refuses a type whose budget runs out there, compiling and storing nothing", async () => {
    const view = new RegistryView();
    // A chain of 20 named schemas, each only a ref to the next.
    for (let i = 0; i < 20; i++) {
      const schema = i === 19 ? { type: "string" } : { $ref: `#L${i + 1}:1.0.0` };
      const value = encodeSchemaRecord({ kind: "schema", name: `L${i}`, version: "1.0.0", schema, description: "", created_at: 0 });
      view.apply({ key: schemaKey(`L${i}`, "1.0.0"), revision: i + 1, operation: "PUT", value, created: 0 });
    }
    const chained = (type: string) => ({ ...spec(type), capabilities: [{ name: `${type}.run`, description: "", input_schema: { $ref: "#L0:1.0.0" }, output_schema: {} }] });
    const store = new MemoryStore();
    let compiled = 0;
    const counting: SchemaChecks = { checkAll: async (schemas) => ((compiled += schemas.length), { verdicts: schemas.map(() => null), ms: 0 }) };
    // The work clock: each reading costs `step` ms, so the cost of resolving is set, not measured.
    const work = { t: 0, step: 0 };
    const now = { t: 0 };
    const r = registrar(now, { store, view, checker: counting, workClock: () => (work.t += work.step) });

    await expect(r.register("free", { spec: chained("free") })).resolves.toMatchObject({ agent_type: "free" });
    expect(compiled).toBe(2);

    compiled = 0;
    work.step = 1000;
    const refused = await r.register("heavy", { spec: chained("heavy") }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ code: ErrorCode.Unavailable, status: 503 });
    expect((refused as Error).message).toMatch(/agent type heavy used its spec validation budget \(10 ms per second\); retry in \d+ ms/);
    expect(compiled).toBe(0);
    expect(await store.get(agentKey("heavy"))).toBeNull();
    // The time was charged: the type waits it off, even for work that would cost nothing now.
    work.step = 0;
    await expect(r.register("heavy", { spec: chained("heavy") })).rejects.toBeInstanceOf(RateLimitedError);
    await expect(r.register("other", { spec: chained("other") })).resolves.toMatchObject({ agent_type: "other" });
  });
});
