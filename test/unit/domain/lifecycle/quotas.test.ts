/**
 * The registration quotas (docs/reliability.md, "Hardening"): each refusal is 429
 * `limit_exceeded` naming its setting, and nothing is written.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { ErrorCode, RegistryError } from "../../../../src/domain/errors.js";
import { checkQuotas, nearQuota, QUOTA_MARGIN } from "../../../../src/domain/lifecycle/quotas.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { Registrar, type RegistrarSettings } from "../../../../src/service/registration/registrar.js";
import { catchUp, registrarSettings } from "../../fixtures.js";
import { rejection } from "../../registry-error.js";

const quotas = { maxMetadataBytes: 100, maxInstancesPerType: 2, maxTypesPerTenant: 2 };
const settings: RegistrarSettings = registrarSettings({ bucketMaxBytes: 0, ...quotas });
const spec = (type: string, tenant: string | null = null) => ({
  agent_type: type,
  version: "1.0.0",
  description: "d",
  owner_team: "t",
  capabilities: [{ name: `${type}.run`, description: "runs", input_schema: {}, output_schema: {} }],
  nats_subject: `tasks.${type}`,
  consumer_group: type,
  tenant_scope: tenant,
});

async function setup() {
  const store = new MemoryStore();
  const view = new RegistryView();
  const registrar = new Registrar({
    store,
    view,
    checker: new InlineSchemaChecks(),
    clock: { now: () => 1000 },
    settings,
    // The view follows the store, as the watch keeps it in step in the service.
    catchUp: async () => undefined,
  });
  const sync = () => catchUp(store, view);
  const register = async (type: string, instanceId: string, extra: { metadata?: Record<string, string>; tenant?: string | null } = {}) => {
    const r = await registrar.register(type, { spec: spec(type, extra.tenant ?? null), instance_id: instanceId, ...(extra.metadata ? { metadata: extra.metadata } : {}) });
    await sync();
    return r;
  };
  return { store, view, register };
}

describe("checkQuotas", () => {
  const facts = { metadataBytes: 0, newInstance: true, instancesOfType: 0, newType: true, typesOfTenant: 0, agentType: "a", tenant: null };
  it("passes what is within every limit and names the setting of what is not", () => {
    expect(() => checkQuotas(facts, quotas)).not.toThrow();
    expect(() => checkQuotas({ ...facts, metadataBytes: 101 }, quotas)).toThrow(/REGISTRY_MAX_METADATA_BYTES/);
    expect(() => checkQuotas({ ...facts, instancesOfType: 2 }, quotas)).toThrow(/REGISTRY_MAX_INSTANCES_PER_TYPE/);
    expect(() => checkQuotas({ ...facts, instancesOfType: 2, newInstance: false }, quotas)).not.toThrow();
    expect(() => checkQuotas({ ...facts, typesOfTenant: 2, tenant: "acme" }, quotas)).toThrow(/tenant acme .*REGISTRY_MAX_TYPES_PER_TENANT/);
    expect(() => checkQuotas({ ...facts, typesOfTenant: 2, newType: false }, quotas)).not.toThrow();
  });
});

describe("nearQuota", () => {
  const facts = { metadataBytes: 0, newInstance: true, instancesOfType: 0, newType: true, typesOfTenant: 0, agentType: "a", tenant: null };
  const wide = { maxMetadataBytes: 100, maxInstancesPerType: 1000, maxTypesPerTenant: 1000 };
  it("is true only for a new instance or type within the margin of its limit", () => {
    expect(nearQuota(facts, wide)).toBe(false);
    expect(nearQuota({ ...facts, instancesOfType: 1000 - QUOTA_MARGIN - 1 }, wide)).toBe(false);
    expect(nearQuota({ ...facts, instancesOfType: 1000 - QUOTA_MARGIN }, wide)).toBe(true);
    expect(nearQuota({ ...facts, instancesOfType: 999, newInstance: false }, wide)).toBe(false);
    expect(nearQuota({ ...facts, typesOfTenant: 1000 - QUOTA_MARGIN }, wide)).toBe(true);
    expect(nearQuota({ ...facts, typesOfTenant: 999, newType: false }, wide)).toBe(false);
  });
});

describe("Registrar quotas", () => {
  it("stops exactly at a limit though the view has not applied the writes just answered", async () => {
    // Replies come once a write is stored; this view applies writes only when caught up.
    const store = new MemoryStore();
    const view = new RegistryView();
    const registrar = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => 1000 }, settings, catchUp: () => catchUp(store, view) });
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    const e = await rejection(RegistryError, registrar.register("alpha", { spec: spec("alpha"), instance_id: "i3" }));
    expect(e.message).toMatch(/alpha already has 2 live instances/);
    await registrar.register("b1", { spec: spec("b1", "acme"), instance_id: "i" });
    await registrar.register("b2", { spec: spec("b2", "acme"), instance_id: "i" });
    const t = await rejection(RegistryError, registrar.register("b3", { spec: spec("b3", "acme"), instance_id: "i" }));
    expect(t.message).toMatch(/tenant acme already have 2 agent types/);
  });

  it("refuses metadata over the limit with limit_exceeded and writes nothing", async () => {
    const { store, register } = await setup();
    const e = await rejection(RegistryError, register("alpha", "i1", { metadata: { blob: "x".repeat(200) } }));
    expect(e.code).toBe(ErrorCode.LimitExceeded);
    expect(e.status).toBe(429);
    expect(e.message).toMatch(/REGISTRY_MAX_METADATA_BYTES/);
    expect(await store.lastRevision()).toBe(0);
  });

  it("refuses a new instance past the per-type limit, and still takes a known one again", async () => {
    const { register } = await setup();
    await register("alpha", "i1");
    await register("alpha", "i2");
    const e = await rejection(RegistryError, register("alpha", "i3"));
    expect(e.code).toBe(ErrorCode.LimitExceeded);
    expect(e.message).toMatch(/alpha already has 2 live instances/);
    await expect(register("alpha", "i2")).resolves.toMatchObject({ instance_id: "i2" });
  });

  it("counts agent types per tenant, the shared agents apart", async () => {
    const { register } = await setup();
    await register("a1", "i", { tenant: "acme" });
    await register("a2", "i", { tenant: "acme" });
    const e = await rejection(RegistryError, register("a3", "i", { tenant: "acme" }));
    expect(e.message).toMatch(/tenant acme already have 2 agent types/);
    await expect(register("g1", "i", { tenant: "globex" })).resolves.toBeDefined();
    await expect(register("s1", "i")).resolves.toBeDefined();
  });
});
