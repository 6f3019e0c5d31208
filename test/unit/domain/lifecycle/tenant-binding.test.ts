/**
 * A tenant's agent is bound to its tenant by the subject it writes on (v1.2,
 * docs/security.md "Tenants"): the write subjects read back, the body's tenant_scope bound to
 * the subject's tenant, and the registrar's rules for writes on a tenant's subjects.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { bindRegisterBody, checkTypeScope } from "../../../../src/domain/lifecycle/tenant-binding.js";
import { agentKey, decodeAgentRecord, decodeInstanceRecord, instanceKey } from "../../../../src/domain/model/records.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { parseWriteSubject, subjects } from "../../../../src/protocol/subjects.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { catchUp, registrarSettings, specBody } from "../../fixtures.js";

const S = subjects("registry");
/** The tokens after the prefix, as the endpoints hand them over. */
const tokens = (subject: string) => subject.split(".").slice(1);

describe("write subjects", () => {
  it("builds the plain form without a tenant and the tenant form with one", () => {
    expect(S.register("billing")).toBe("registry.register.billing");
    expect(S.register("billing", null)).toBe("registry.register.billing");
    expect(S.register("billing", "acme")).toBe("registry.tenant.acme.register.billing");
    expect(S.heartbeat("billing", "i-1", "acme")).toBe("registry.tenant.acme.heartbeat.billing.i-1");
    expect(S.deregisterInstance("billing", "i-1", "acme")).toBe("registry.tenant.acme.deregister.billing.i-1");
    expect(S.deregisterType("billing", "acme")).toBe("registry.tenant.acme.deregister.billing");
    expect(subjects("a.b").register("billing", "acme")).toBe("a.b.tenant.acme.register.billing");
  });

  it("reads back every write subject it builds, in both forms", () => {
    for (const tenant of [null, "acme"]) {
      expect(parseWriteSubject(tokens(S.register("billing", tenant)))).toEqual({ op: "register", tenant, agentType: "billing" });
      expect(parseWriteSubject(tokens(S.heartbeat("billing", "i-1", tenant)))).toEqual({ op: "heartbeat", tenant, agentType: "billing", instanceId: "i-1" });
      expect(parseWriteSubject(tokens(S.deregisterInstance("billing", "i-1", tenant)))).toEqual({ op: "deregister", tenant, agentType: "billing", instanceId: "i-1" });
      expect(parseWriteSubject(tokens(S.deregisterType("billing", tenant)))).toEqual({ op: "deregister_type", tenant, agentType: "billing" });
    }
  });

  it("takes no query, no schema put and no subject of the wrong length for a write", () => {
    for (const subject of [
      "registry.lookup",
      "registry.tenant.acme.lookup",
      "registry.schema.put.Address",
      "registry.register",
      "registry.register.billing.i-1",
      "registry.heartbeat.billing",
      "registry.heartbeat.billing.i-1.x",
      "registry.deregister.billing.i-1.x",
      "registry.tenant.acme",
      "registry.tenant.acme.register",
      "registry.tenant.acme.register.billing.i-1",
      "registry.tenant.acme.heartbeat.billing",
      "registry.tenant.tenant.acme.register.billing",
    ]) {
      expect(parseWriteSubject(tokens(subject)), subject).toBeNull();
    }
  });

  it("names the first token that breaks its rule: tenant, then agent_type, then instance_id", () => {
    expect(parseWriteSubject(tokens("registry.tenant.Acme.register.billing"))).toMatchObject({ token: "tenant", value: "Acme" });
    expect(parseWriteSubject(tokens("registry.tenant.-acme.heartbeat.Billing.i!"))).toMatchObject({ token: "tenant", value: "-acme" });
    expect(parseWriteSubject(tokens("registry.tenant.acme.heartbeat.Billing.i!"))).toMatchObject({ token: "agent_type", value: "Billing" });
    expect(parseWriteSubject(tokens("registry.register.Billing"))).toMatchObject({ token: "agent_type", value: "Billing" });
    expect(parseWriteSubject(tokens("registry.deregister.billing.i!"))).toMatchObject({ token: "instance_id", value: "i!" });
  });
});

/** The RegistryError a call throws. */
function thrown(fn: () => unknown): RegistryError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RegistryError) return e;
    throw e;
  }
  throw new Error("expected a RegistryError");
}

describe("bindRegisterBody", () => {
  const spec = { agent_type: "billing", version: "1.0.0" };

  it("fills the subject's tenant into a spec, a card body or a tool spec body that names none", () => {
    expect(bindRegisterBody({ spec }, "acme", "refuse")).toEqual({ spec: { ...spec, tenant_scope: "acme" } });
    expect(bindRegisterBody({ spec: { ...spec, tenant_scope: null } }, "acme", "refuse")).toEqual({ spec: { ...spec, tenant_scope: "acme" } });
    expect(bindRegisterBody({ a2a_card: { name: "x" } }, "acme", "refuse")).toEqual({ a2a_card: { name: "x" }, tenant_scope: "acme" });
    expect(bindRegisterBody({ mcp_toolspec: { tools: [] }, tenant_scope: null }, "acme", "refuse")).toEqual({ mcp_toolspec: { tools: [] }, tenant_scope: "acme" });
    expect(bindRegisterBody({ spec: { ...spec, tenant_scope: "acme" } }, "acme", "refuse")).toEqual({ spec: { ...spec, tenant_scope: "acme" } });
  });

  it("refuses another tenant with invalid_request naming tenant_scope", () => {
    const e = thrown(() => bindRegisterBody({ spec: { ...spec, tenant_scope: "globex" } }, "acme", "refuse"));
    expect(e.code).toBe("invalid_request");
    expect(e.message).toBe('spec.tenant_scope "globex" does not match the subject\'s tenant acme');
    expect(e.issues).toEqual([{ path: "spec.tenant_scope", message: "must be acme (the subject's tenant) or absent" }]);
    expect(thrown(() => bindRegisterBody({ a2a_card: {}, tenant_scope: "globex" }, "acme", "allow")).issues?.[0]?.path).toBe("tenant_scope");
  });

  it("refuses any tenant on the plain subject unless the deployment allows it, and leaves shared bodies alone", () => {
    const e = thrown(() => bindRegisterBody({ spec: { ...spec, tenant_scope: "globex" } }, null, "refuse"));
    expect(e.code).toBe("invalid_request");
    expect(e.message).toContain("tenant.globex.register.<agent_type>");
    expect(e.issues?.[0]?.path).toBe("spec.tenant_scope");
    expect(thrown(() => bindRegisterBody({ mcp_toolspec: {}, tenant_scope: "globex" }, null, "refuse")).issues?.[0]?.path).toBe("tenant_scope");
    const legacy = { spec: { ...spec, tenant_scope: "globex" } };
    expect(bindRegisterBody(legacy, null, "allow")).toBe(legacy);
    const shared = { spec: { ...spec, tenant_scope: null } };
    expect(bindRegisterBody(shared, null, "refuse")).toBe(shared);
  });

  it("leaves a tenant_scope of the wrong type, or a spec that is no object, to the spec's validation", () => {
    const wrong = { spec: { ...spec, tenant_scope: 7 } };
    expect(bindRegisterBody(wrong, "acme", "refuse")).toBe(wrong);
    const notObject = { spec: "billing" };
    expect(bindRegisterBody(notObject, "acme", "refuse")).toBe(notObject);
  });

  it("keeps an agent type in the scope it was stored with", () => {
    expect(() => checkTypeScope("billing", "acme", "acme")).not.toThrow();
    expect(() => checkTypeScope("billing", null, null)).not.toThrow();
    for (const [stored, registering] of [["acme", "globex"], [null, "acme"], ["acme", null]] as const) {
      const e = thrown(() => checkTypeScope("billing", stored, registering));
      expect(e.code).toBe("conflict");
      // the other scope is never named: it may be another tenant's
      expect(e.message).not.toMatch(/acme|globex/);
    }
  });
});

describe("the registrar on a tenant's subjects", () => {
  const t = 1_000_000;
  let memory: MemoryStore;
  let view: RegistryView;
  let registrar: Registrar;
  const spec = specBody;
  const make = (overrides: Parameters<typeof registrarSettings>[0] = {}) =>
    new Registrar({
      store: memory,
      view,
      checker: new InlineSchemaChecks(),
      clock: { now: () => t },
      settings: registrarSettings({ heartbeatSubject: S.heartbeat, ...overrides }),
      catchUp: () => catchUp(memory, view),
    });
  const stored = async (type: string) => {
    const e = await memory.get(agentKey(type));
    return e && e.operation === "PUT" ? decodeAgentRecord(e.value) : null;
  };
  /** A heartbeat on a known type refuses synchronously, as it answers from memory: called inside the promise. */
  const rejection = async (p: unknown): Promise<RegistryError> => {
    const e = await Promise.resolve()
      .then(() => (typeof p === "function" ? (p as () => unknown)() : p))
      .then(() => null, (err: unknown) => err);
    if (e instanceof RegistryError) return e;
    throw new Error(`expected a RegistryError, got ${String(e)}`);
  };

  beforeEach(() => {
    memory = new MemoryStore();
    view = new RegistryView();
    registrar = make();
  });

  it("stores a tenant's registration with its tenant and answers the tenant's heartbeat subject", async () => {
    const reply = await registrar.register("acme-billing", { spec: spec("acme-billing"), instance_id: "i1" }, { tenant: "acme" });
    expect(reply.heartbeat_subject).toBe("registry.tenant.acme.heartbeat.acme-billing.i1");
    expect((await stored("acme-billing"))?.spec.tenant_scope).toBe("acme");
    const shared = await registrar.register("shared-bot", { spec: spec("shared-bot"), instance_id: "i1" }, { tenant: null });
    expect(shared.heartbeat_subject).toBe("registry.heartbeat.shared-bot.i1");
    expect((await stored("shared-bot"))?.spec.tenant_scope).toBeNull();
  });

  it("stores nothing for a spec of another tenant, nor for a tenant's spec on the plain subject", async () => {
    const other = await rejection(registrar.register("acme-billing", { spec: spec("acme-billing", { tenant_scope: "globex" }) }, { tenant: "acme" }));
    expect(other.code).toBe("invalid_request");
    expect(other.issues?.[0]?.path).toBe("spec.tenant_scope");
    // REGISTRY_PLAIN_TENANT_SCOPE=refuse, as deploy/ sets it: the plain subject takes no tenant.
    const plain = await rejection(make({ plainTenantScope: "refuse" }).register("acme-billing", { spec: spec("acme-billing", { tenant_scope: "globex" }) }, { tenant: null }));
    expect(plain.code).toBe("invalid_request");
    expect(await memory.lastRevision()).toBe(0);
    // The default, allow: as before v1.2, so existing clients keep working.
    await registrar.register("acme-billing", { spec: spec("acme-billing", { tenant_scope: "globex" }) }, { tenant: null });
    expect((await stored("acme-billing"))?.spec.tenant_scope).toBe("globex");
  });

  it("keeps a stored type in its tenant: another tenant's subject or the plain one cannot take it", async () => {
    await registrar.register("acme-billing", { spec: spec("acme-billing"), instance_id: "i1" }, { tenant: "acme" });
    await catchUp(memory, view);
    const before = await memory.lastRevision();
    const globex = await rejection(registrar.register("acme-billing", { spec: spec("acme-billing", { version: "2.0.0" }) }, { tenant: "globex" }));
    expect(globex.code).toBe("conflict");
    const plain = await rejection(registrar.register("acme-billing", { spec: spec("acme-billing", { version: "2.0.0" }) }, { tenant: null }));
    expect(plain.code).toBe("conflict");
    expect(await memory.lastRevision()).toBe(before);
    expect((await stored("acme-billing"))?.spec).toMatchObject({ version: "1.0.0", tenant_scope: "acme" });
    // The registry file (the operator's) may move it.
    await registrar.register("acme-billing", { spec: spec("acme-billing", { tenant_scope: "globex" }) }, { static: true });
    expect((await stored("acme-billing"))?.spec.tenant_scope).toBe("globex");
  });

  it("lets a tenant's heartbeats and deregistrations reach that tenant's agents only", async () => {
    await registrar.register("acme-billing", { spec: spec("acme-billing"), instance_id: "i1" }, { tenant: "acme" });
    await registrar.register("shared-bot", { spec: spec("shared-bot"), instance_id: "i1" });
    await catchUp(memory, view);
    expect(await registrar.heartbeat("acme-billing", "i1", {}, "acme")).toMatchObject({ status: "ready" });
    // the plain subject still reaches it (agents registered before v1.2 heartbeat there)
    expect(await registrar.heartbeat("acme-billing", "i1", {})).toMatchObject({ status: "ready" });
    const before = await memory.lastRevision();
    expect((await rejection(() => registrar.heartbeat("acme-billing", "i1", {}, "globex"))).code).toBe("unknown_instance");
    expect((await rejection(() => registrar.heartbeat("shared-bot", "i1", {}, "acme"))).code).toBe("unknown_instance");
    expect((await rejection(registrar.deregisterInstance("acme-billing", "i1", undefined, "globex"))).code).toBe("unknown_instance");
    expect((await rejection(registrar.deregisterType("acme-billing", "globex"))).code).toBe("not_found");
    expect((await rejection(registrar.heartbeat("nobody", "i1", {}, "acme"))).code).toBe("unknown_instance");
    expect(await memory.lastRevision()).toBe(before);
    expect((await registrar.deregisterInstance("acme-billing", "i1", undefined, "acme")).agent_removed).toBe(true);
    const gone = await memory.get(instanceKey("acme-billing", "i1"));
    expect(gone && decodeInstanceRecord(gone.value)?.kind).toBe("gone");
  });

  it("finds a tenant's type its view has not applied yet before it answers unknown_instance", async () => {
    // Registered through another replica: this view has not seen it.
    const other = new Registrar({ store: memory, view: new RegistryView(), checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: registrarSettings() });
    await other.register("acme-billing", { spec: spec("acme-billing"), instance_id: "i1" }, { tenant: "acme" });
    expect(view.get("acme-billing")).toBeUndefined();
    expect(await registrar.heartbeat("acme-billing", "i1", {}, "acme")).toMatchObject({ status: "ready" });
  });
});
