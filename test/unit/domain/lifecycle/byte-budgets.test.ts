/**
 * Byte budgets (issue 35, item 3): the view's estimate of what each agent type and tenant holds
 * in the bucket, kept as entries apply, and the registrar's refusal of a registration that
 * would add past a budget. Heartbeats are never refused by it.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { ErrorCode, RegistryError } from "../../../../src/domain/errors.js";
import { byteBudgetsOf, checkByteBudgets } from "../../../../src/domain/lifecycle/byte-budgets.js";
import { StoreFullError, type Store, type StoreEntry, type StoreWatch } from "../../../../src/domain/ports.js";
import { agentKey, encodeRecord, instanceKey, liveInstanceRecord } from "../../../../src/domain/model/records.js";
import { VALUE_OVERHEAD_BYTES } from "../../../../src/domain/view/stored-bytes.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { catchUp, registrarSettings } from "../../fixtures.js";
import { rejection } from "../../registry-error.js";

const spec = (type: string, tenant: string | null = null, description = "d") => ({
  agent_type: type,
  version: "1.0.0",
  description,
  owner_team: "t",
  capabilities: [{ name: `${type}.run`, description: "runs", input_schema: {}, output_schema: {} }],
  nats_subject: `tasks.${type}`,
  consumer_group: type,
  tenant_scope: tenant,
});

describe("the view's byte tally", () => {
  const entry = (key: string, revision: number, value: unknown, operation: StoreEntry["operation"] = "PUT"): StoreEntry => ({
    key,
    revision,
    operation,
    value: operation === "PUT" ? encodeRecord(value as never) : new Uint8Array(),
    created: 1000,
  });
  const agent = (type: string, tenant: string | null) => ({ kind: "agent", spec: agentSpecSchema.parse(spec(type, tenant)), registered_at: 1, updated_at: 1 });
  const live = (metadata: Record<string, string> = {}) =>
    liveInstanceRecord({ version: "1.0.0", status: "ready", registered_at: 1, last_heartbeat: 2, heartbeat_interval_ms: 1000, active_tasks: 0, metadata, spec_changed: false });
  const size = (key: string, value: unknown) => encodeRecord(value as never).length + key.length + VALUE_OVERHEAD_BYTES;

  it("counts each key as `history` copies of its last value, per type and per tenant; same-size heartbeats add nothing, a tombstone keeps the record's size, a delete takes it back", () => {
    const view = new RegistryView();
    view.onUnreadable((key, _rev, problem) => expect.fail(`${key}: ${problem}`));
    view.bytes.keptValues = 2;
    let rev = 0;
    view.apply(entry(agentKey("a"), ++rev, agent("a", "acme")));
    view.apply(entry(agentKey("b"), ++rev, agent("b", null)));
    const specA = size(agentKey("a"), agent("a", "acme"));
    expect(view.bytes.ofType("a")).toBe(2 * specA);
    expect(view.bytes.ofTenant("acme")).toBe(2 * specA);
    expect(view.bytes.ofTenant(null)).toBe(2 * size(agentKey("b"), agent("b", null)));

    const key = instanceKey("a", "i1");
    const rec = live({ k: "v".repeat(500) });
    view.apply(entry(key, ++rev, rec));
    expect(view.bytes.ofType("a")).toBe(2 * (specA + size(key, rec)));
    for (let i = 0; i < 5; i++) view.apply(entry(key, ++rev, rec));
    expect(view.bytes.ofType("a")).toBe(2 * (specA + size(key, rec)));
    expect(view.bytes.ofTenant("acme")).toBe(view.bytes.ofType("a"));
    expect(view.storedOf("a", "i1")).toBe(size(key, rec));
    const larger = live({ k: "v".repeat(900) });
    view.apply(entry(key, ++rev, larger));
    expect(view.bytes.ofType("a")).toBe(2 * (specA + size(key, larger)));

    // The key still holds the live records before its tombstone, until it is deleted.
    const gone = { kind: "gone", version: "1.0.0", reason: "graceful", at: 5, registered_at: 1, last_heartbeat: 2 };
    view.apply(entry(key, ++rev, gone));
    expect(view.bytes.ofType("a")).toBe(2 * (specA + size(key, larger)));
    view.apply(entry(key, ++rev, null, "DEL"));
    expect(view.bytes.ofType("a")).toBe(2 * specA);
    expect(view.bytes.ofTenant("acme")).toBe(2 * specA);
    expect(view.bytes.ofTenant(null)).toBeGreaterThan(0);
  });

  it("counts instances that came before their spec for the type alone, then for the tenant the spec names; a spec moved to another tenant takes its bytes along", () => {
    const view = new RegistryView();
    let rev = 0;
    const key = instanceKey("early", "i1");
    view.apply(entry(key, ++rev, live()));
    expect(view.bytes.ofType("early")).toBe(size(key, live()));
    expect(view.bytes.ofTenant("acme")).toBe(0);
    view.apply(entry(agentKey("early"), ++rev, agent("early", "acme")));
    expect(view.bytes.ofTenant("acme")).toBe(view.bytes.ofType("early"));
    view.apply(entry(agentKey("early"), ++rev, agent("early", "globex")));
    expect(view.bytes.ofTenant("acme")).toBe(0);
    expect(view.bytes.ofTenant("globex")).toBe(view.bytes.ofType("early"));
    // The spec deleted: its instances' keys remain, counted for the type, no tenant's.
    view.apply(entry(agentKey("early"), ++rev, null, "DEL"));
    expect(view.bytes.ofTenant("globex")).toBe(0);
    expect(view.bytes.ofType("early")).toBe(size(key, live()));
    view.clear();
    expect(view.bytes.ofType("early")).toBe(0);
  });
});

describe("byte budgets", () => {
  it("default to a tenth of the bucket per type and half per tenant, and to none on an unlimited bucket", () => {
    expect(byteBudgetsOf({ bucketMaxBytes: 1_000_000 })).toEqual({ typeMaxBytes: 100_000, tenantMaxBytes: 500_000 });
    expect(byteBudgetsOf({ bucketMaxBytes: 0 })).toEqual({ typeMaxBytes: 0, tenantMaxBytes: 0 });
    expect(byteBudgetsOf({ bucketMaxBytes: 1_000_000, typeMaxBytes: 0, tenantMaxBytes: 7 })).toEqual({ typeMaxBytes: 0, tenantMaxBytes: 7 });
  });

  it("refuse only what adds bytes past a budget, naming the setting", () => {
    const f = { agentType: "a", tenant: "acme", typeBytes: 90, tenantBytes: 90, adding: 20 };
    expect(() => checkByteBudgets(f, { typeMaxBytes: 100, tenantMaxBytes: 0 })).toThrow(/agent type a .*REGISTRY_TYPE_MAX_BYTES/);
    expect(() => checkByteBudgets(f, { typeMaxBytes: 0, tenantMaxBytes: 100 })).toThrow(/^tenant acme holds about 90 bytes .*REGISTRY_TENANT_MAX_BYTES/);
    expect(() => checkByteBudgets({ ...f, tenant: null }, { typeMaxBytes: 0, tenantMaxBytes: 100 })).toThrow(/^the shared agents hold about 90 bytes/);
    expect(() => checkByteBudgets({ ...f, typeBytes: 500, adding: 0 }, { typeMaxBytes: 100, tenantMaxBytes: 100 })).not.toThrow();
    expect(() => checkByteBudgets(f, { typeMaxBytes: 110, tenantMaxBytes: 110 })).not.toThrow();
  });
});

/** A store that refuses every write as full while `full` is set. */
class FillableStore implements Store {
  full = false;
  constructor(readonly inner = new MemoryStore(4)) {}
  get(key: string) {
    return this.inner.get(key);
  }
  watch(after: number): Promise<StoreWatch> {
    return this.inner.watch(after);
  }
  lastRevision() {
    return this.inner.lastRevision();
  }
  write(key: string, value: Uint8Array, expected: number) {
    return this.full ? Promise.reject(new StoreFullError(key)) : this.inner.write(key, value, expected);
  }
  remove(key: string, expected: number) {
    return this.inner.remove(key, expected);
  }
}

describe("the registrar under byte budgets", () => {
  const metadata = { blob: "m".repeat(2000) };

  function setup(budgets: { typeMaxBytes: number; tenantMaxBytes: number }) {
    const store = new FillableStore();
    const view = new RegistryView();
    view.bytes.keptValues = 4;
    let unavailable = 0;
    const settings = { ...registrarSettings(), ...budgets };
    const registrar = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => 1000 }, settings, catchUp: () => catchUp(store, view), onUnavailable: () => unavailable++ });
    const register = async (type: string, id: string, tenant: string | null = null, meta: Record<string, string> = metadata) => {
      const r = await registrar.register(type, { spec: spec(type, tenant), instance_id: id, metadata: meta });
      await catchUp(store, view);
      return r;
    };
    return { store, view, registrar, register, settings, unavailable: () => unavailable };
  }

  it("refuses a type's new instance past REGISTRY_TYPE_MAX_BYTES with nothing stored, while another type registers and the admitted ones heartbeat", async () => {
    const { store, view, registrar, register } = setup({ typeMaxBytes: 60_000, tenantMaxBytes: 0 });
    let admitted = 0;
    let refused: RegistryError | null = null;
    for (let i = 0; i < 20 && refused === null; i++) {
      try {
        await register("hog", `h${i}`);
        admitted++;
      } catch (e) {
        if (!(e instanceof RegistryError)) throw e;
        refused = e;
      }
    }
    console.log("DEBUG", admitted, view.bytes.ofType("hog"), view.size);
    // Each instance is charged 4 copies of a ~2.3 KB record: 6 fit in 60 KB beside the spec's 4 copies.
    expect(admitted).toBeGreaterThan(3);
    expect(refused?.code).toBe(ErrorCode.LimitExceeded);
    expect(refused?.message).toMatch(/agent type hog .*REGISTRY_TYPE_MAX_BYTES/);
    expect(await store.get(instanceKey("hog", `h${admitted}`))).toBeNull();
    expect(view.bytes.ofType("hog")).toBeLessThanOrEqual(60_000);

    await register("bystander", "b1");
    // Heartbeats of admitted instances are never refused, even once the type is at its budget.
    for (let round = 0; round < 5; round++) for (let i = 0; i < admitted; i++) await registrar.heartbeat("hog", `h${i}`, {});
    // A live instance registering again with the metadata it had is not refused either.
    await register("hog", "h0");
  });

  it("refuses past REGISTRY_TENANT_MAX_BYTES whichever of the tenant's types asks; other tenants go on", async () => {
    const { register } = setup({ typeMaxBytes: 0, tenantMaxBytes: 40_000 });
    let refused: RegistryError | null = null;
    for (let i = 0; i < 20 && refused === null; i++) {
      await register(`t${i}`, "x", "acme").catch((e: unknown) => {
        if (!(e instanceof RegistryError)) throw e;
        refused = e;
      });
    }
    expect((refused as RegistryError | null)?.message).toMatch(/tenant acme .*REGISTRY_TENANT_MAX_BYTES/);
    await register("other", "x", "globex");
    await register("shared", "x", null);
  });

  it("a heartbeat the full store refused is answered unavailable (retry) and tells the evictor, as a store outage does", async () => {
    const { store, registrar, register, unavailable } = setup({ typeMaxBytes: 0, tenantMaxBytes: 0 });
    await register("a", "i1");
    store.full = true;
    const e = await rejection(RegistryError, Promise.resolve(registrar.heartbeat("a", "i1", {})));
    expect(e.code).toBe(ErrorCode.Unavailable);
    expect(e.message).toMatch(/store is full/);
    expect(unavailable()).toBe(1);
    const r = await rejection(RegistryError, registrar.register("b", { spec: spec("b"), instance_id: "x" }));
    expect(r.code).toBe(ErrorCode.LimitExceeded);
    expect(r.message).toMatch(/REGISTRY_BUCKET_MAX_BYTES/);
  });
});
