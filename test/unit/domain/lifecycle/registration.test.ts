import { describe, expect, it } from "vitest";
import type { AgentState, AgentStatus } from "../../../../src/domain/model/model.js";
import type { AgentRecord, GoneInstanceRecord, LiveInstanceRecord } from "../../../../src/domain/model/records.js";
import {
  planHeartbeat,
  planRegister,
  planRemoval,
  sameSpec,
  type Current,
  type FleetContext,
  type RegisterCommand,
} from "../../../../src/domain/lifecycle/registration.js";
import { agentSpecSchema, type AgentSpec } from "../../../../src/domain/spec/spec.js";
import { specBody } from "../../fixtures.js";
import { thrownRegistryError } from "../../registry-error.js";

const NOW = 50_000;

const makeSpec = (type: string, extra: Record<string, unknown> = {}): AgentSpec => agentSpecSchema.parse(specBody(type, extra));

const cmd = (spec: AgentSpec, extra: Partial<RegisterCommand> = {}): RegisterCommand => ({
  spec,
  instanceId: "i1",
  heartbeatIntervalMs: 1000,
  status: "ready",
  metadata: { zone: "eu" },
  ...extra,
});

const fleet = (extra: Partial<FleetContext> = {}): FleetContext => ({
  otherLiveVersions: [],
  others: [],
  duplicateCapabilities: "allow",
  ...extra,
});

const storedAgent = (spec: AgentSpec, revision = 5, extra: Partial<AgentRecord> = {}) => ({
  record: { kind: "agent" as const, spec, registered_at: 100, updated_at: 200, ...extra },
  revision,
});

const live = (extra: Partial<LiveInstanceRecord> = {}): LiveInstanceRecord => ({
  kind: "instance",
  version: "1.0.0",
  status: "ready",
  registered_at: 100,
  last_heartbeat: 300,
  heartbeat_interval_ms: 1000,
  active_tasks: 4,
  metadata: {},
  spec_changed: true,
  ...extra,
});

const gone: GoneInstanceRecord = { kind: "gone", version: "1.0.0", reason: "evicted", at: 400, registered_at: 100, last_heartbeat: 300 };

function otherAgent(spec: AgentSpec, status: AgentStatus = "ready"): AgentState {
  return { agent_type: spec.agent_type, spec, registered_at: 0, revision: 1, instances: new Map(), status, deregistered_at: null };
}

const none: Current = { agent: null, instance: null };

const registryError = thrownRegistryError;

describe("planRegister", () => {
  it("creates the agent and the instance for a new agent type", () => {
    const spec = makeSpec("alpha");
    const plan = planRegister(cmd(spec), none, fleet(), NOW);
    expect(plan.agentWrite).toEqual({ record: { kind: "agent", spec, registered_at: NOW, updated_at: NOW }, expectedRevision: 0 });
    expect(plan.instanceWrite).toEqual({
      record: {
        kind: "instance", version: "1.0.0", status: "ready", registered_at: NOW, last_heartbeat: NOW,
        heartbeat_interval_ms: 1000, active_tasks: 0, metadata: { zone: "eu" }, spec_changed: true,
      },
      expectedRevision: 0,
    });
    expect(plan.specChanged).toBe(true);
    expect(plan.notes).toEqual([]);
  });

  it("writes no agent record when the same spec registers again, and refreshes the instance", () => {
    const spec = makeSpec("alpha");
    const plan = planRegister(cmd(spec, { status: "registered" }), { agent: storedAgent(makeSpec("alpha")), instance: { record: live(), revision: 6 } }, fleet(), NOW);
    expect(plan.agentWrite).toBeNull();
    expect(plan.specChanged).toBe(false);
    expect(plan.instanceWrite.expectedRevision).toBe(6);
    expect(plan.instanceWrite.record).toMatchObject({ registered_at: 100, last_heartbeat: NOW, active_tasks: 4, status: "registered", spec_changed: false });
  });

  it("rewrites an unchanged record when the type has no live instance, so the retention sweep cannot race it", () => {
    const spec = makeSpec("alpha");
    const plan = planRegister(cmd(spec), { agent: storedAgent(spec), instance: null }, fleet(), NOW);
    // Rewritten unchanged: updated_at stays the time of the last change (AgentView's updated_at, v1.2).
    expect(plan.agentWrite).toMatchObject({ expectedRevision: 5, record: { spec, registered_at: 100, updated_at: storedAgent(spec).record.updated_at } });
    expect(plan.specChanged).toBe(false);
    const withOthers = planRegister(cmd(spec), { agent: storedAgent(spec), instance: null }, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(withOthers.agentWrite).toBeNull();
  });

  it("replaces the stored spec with a newer version, keeping registered_at", () => {
    const plan = planRegister(cmd(makeSpec("alpha", { version: "1.2.0" })), { agent: storedAgent(makeSpec("alpha")), instance: null }, fleet(), NOW);
    expect(plan.agentWrite?.expectedRevision).toBe(5);
    expect(plan.agentWrite?.record).toMatchObject({ registered_at: 100, updated_at: NOW, spec: { version: "1.2.0" } });
    expect(plan.specChanged).toBe(true);
    expect(plan.instanceWrite.record.spec_changed).toBe(true);
  });

  it("refuses another spec under the same version with conflict, naming the fields that differ", () => {
    const stored = { agent: storedAgent(makeSpec("alpha")), instance: { record: live(), revision: 6 } };
    const e = registryError(() => planRegister(cmd(makeSpec("alpha", { description: "new words", tags: { a: "b" } })), stored, fleet(), NOW));
    expect(e).toMatchObject({ code: "conflict", status: 409 });
    expect(e.message).toContain("alpha 1.0.0 is already registered with another spec");
    expect(e.message).toContain("(differs in: description, tags);");
    expect(e.message).toContain('"replace": true');
    // Also when the type has no live instance: the version still names the spec the registry keeps.
    expect(registryError(() => planRegister(cmd(makeSpec("alpha", { owner_team: "other" })), { agent: storedAgent(makeSpec("alpha")), instance: null }, fleet(), NOW)).code).toBe("conflict");
  });

  it("names the capabilities that changed, were added or removed", () => {
    const caps = (...names: string[]) => names.map((name) => ({ name, description: name, input_schema: {}, output_schema: {} }));
    const stored = { agent: storedAgent(makeSpec("alpha", { capabilities: caps("a.keep", "a.change", "a.drop") })), instance: null };
    const next = makeSpec("alpha", { capabilities: [...caps("a.keep"), { ...caps("a.change")[0], description: "now other" }, ...caps("a.new")] });
    const e = registryError(() => planRegister(cmd(next), stored, fleet(), NOW));
    expect(e.message).toContain("(differs in: capabilities (changed: a.change; added: a.new; removed: a.drop));");
    const reordered = makeSpec("alpha", { capabilities: caps("a.drop", "a.change", "a.keep") });
    expect(registryError(() => planRegister(cmd(reordered), stored, fleet(), NOW)).message).toContain("capabilities (order)");
  });

  it("overwrites a different spec of the same version with replace, and says so in the instance record", () => {
    const stored = { agent: storedAgent(makeSpec("alpha")), instance: { record: live(), revision: 6 } };
    const plan = planRegister(cmd(makeSpec("alpha", { description: "new words" }), { replace: true }), stored, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(plan.agentWrite).toMatchObject({ expectedRevision: 5, record: { registered_at: 100, updated_at: NOW, spec: { description: "new words" } } });
    expect(plan.specChanged).toBe(true);
    expect(plan.replaced).toBe(true);
    expect(plan.instanceWrite.record).toMatchObject({ spec_changed: true, replaced: true });
  });

  it("keeps the same spec idempotent, with replace or without, and marks nothing replaced", () => {
    const stored = { agent: storedAgent(makeSpec("alpha")), instance: { record: live(), revision: 6 } };
    for (const replace of [undefined, true]) {
      const plan = planRegister(cmd(makeSpec("alpha"), replace ? { replace } : {}), stored, fleet(), NOW);
      expect(plan.agentWrite).toBeNull();
      expect(plan.replaced).toBe(false);
      expect(plan.instanceWrite.record).not.toHaveProperty("replaced");
    }
  });

  it("compares specs by content: a stored record with its keys in another order is the same spec", () => {
    const spec = makeSpec("alpha");
    // A record whose keys come in another order (an older registry's, or one whose reader
    // filled in a default such as `kind`) holds the same spec.
    const { agent_type, ...rest } = spec;
    const older = { ...rest, agent_type } as typeof spec;
    expect(JSON.stringify(older)).not.toBe(JSON.stringify(spec));
    const plan = planRegister(cmd(spec), { agent: storedAgent(older), instance: { record: live(), revision: 6 } }, fleet(), NOW);
    expect(plan.agentWrite).toBeNull();
    expect(plan.specChanged).toBe(false);
  });

  it("lets a registry-file entry overwrite its version's spec, as if with replace", () => {
    const stored = { agent: storedAgent(makeSpec("alpha"), 5, { static: true }), instance: { record: live(), revision: 6 } };
    const plan = planRegister(cmd(makeSpec("alpha", { description: "edited in the file" }), { instanceId: "static", static: true }), stored, fleet(), NOW);
    expect(plan.agentWrite?.record).toMatchObject({ static: true, spec: { description: "edited in the file" } });
    expect(plan.replaced).toBe(true);
    expect(plan.instanceWrite.record.replaced).toBe(true);
  });

  it("keeps replace out of the rollback rule: a lower version still leaves the newer live spec stored", () => {
    const stored = storedAgent(makeSpec("alpha", { version: "2.0.0" }));
    const plan = planRegister(cmd(makeSpec("alpha", { version: "1.0.0", description: "old" }), { replace: true }), { agent: stored, instance: null }, fleet({ otherLiveVersions: ["2.0.0"] }), NOW);
    expect(plan.agentWrite).toBeNull();
    expect(plan.replaced).toBe(false);
    expect(plan.notes).toHaveLength(1);
  });

  it("keeps a newer stored spec while an instance of that version is live, and says so", () => {
    const stored = storedAgent(makeSpec("alpha", { version: "2.0.0" }));
    const plan = planRegister(cmd(makeSpec("alpha", { version: "1.5.0" })), { agent: stored, instance: null }, fleet({ otherLiveVersions: ["2.0.0"] }), NOW);
    expect(plan.agentWrite).toBeNull();
    expect(plan.specChanged).toBe(false);
    expect(plan.instanceWrite.record.version).toBe("1.5.0");
    expect(plan.notes).toHaveLength(1);
    expect(plan.notes[0]).toContain("1.5.0");
    expect(plan.notes[0]).toContain("2.0.0");
  });

  it("replaces with a lower version when no instance of the newer one is live", () => {
    const stored = storedAgent(makeSpec("alpha", { version: "2.0.0" }));
    const plan = planRegister(cmd(makeSpec("alpha", { version: "1.5.0" })), { agent: stored, instance: null }, fleet({ otherLiveVersions: ["1.5.0"] }), NOW);
    expect(plan.agentWrite?.record.spec.version).toBe("1.5.0");
    expect(plan.agentWrite?.expectedRevision).toBe(5);
    expect(plan.notes).toEqual([]);
  });

  it("plans the subject's claim with the spec: created, kept, rewritten with the spec, moved", () => {
    const spec = makeSpec("alpha");
    const own = { record: { kind: "subject_claim" as const, subject: "tasks.alpha", agent_type: "alpha", tenant_scope: null, at: 10 }, revision: 2 };
    expect(planRegister(cmd(spec), none, fleet(), NOW).claimWrite).toEqual({ record: { ...own.record, at: NOW }, expectedRevision: 0 });
    const same = { agent: storedAgent(spec), instance: { record: live(), revision: 6 } };
    expect(planRegister(cmd(spec), same, fleet({ claim: own }), NOW).claimWrite).toBeNull();
    // Writing the spec (here: a revive) rewrites the claim on its revision, racing the sweep's delete.
    expect(planRegister(cmd(spec), { agent: storedAgent(spec), instance: null }, fleet({ claim: own }), NOW).claimWrite).toEqual({ record: own.record, expectedRevision: 2 });
    const moved = planRegister(cmd(makeSpec("alpha", { version: "2.0.0", nats_subject: "tasks.new" })), same, fleet(), NOW);
    expect(moved.claimWrite).toMatchObject({ record: { subject: "tasks.new" }, expectedRevision: 0 });
    expect(moved.releaseSubject).toBe("tasks.alpha");
    expect(planRegister(cmd(makeSpec("alpha", { version: "2.0.0" })), same, fleet({ claim: own }), NOW).releaseSubject).toBeNull();
  });

  it("leaves the claim alone when a rollback keeps the newer spec", () => {
    const stored = storedAgent(makeSpec("alpha", { version: "2.0.0", nats_subject: "tasks.v2" }));
    const plan = planRegister(cmd(makeSpec("alpha", { version: "1.0.0" })), { agent: stored, instance: null }, fleet({ otherLiveVersions: ["2.0.0"] }), NOW);
    expect(plan.claimWrite).toBeNull();
    expect(plan.releaseSubject).toBeNull();
  });

  it("refuses a subject another type claimed before writing anything", () => {
    const theirs = { record: { kind: "subject_claim" as const, subject: "tasks.alpha", agent_type: "beta", tenant_scope: null, at: 10 }, revision: 2 };
    expect(registryError(() => planRegister(cmd(makeSpec("alpha")), none, fleet({ claim: theirs }), NOW)).code).toBe("conflict");
  });

  it("refuses a nats_subject used by another live agent type, not by a deregistered one", () => {
    const mine = makeSpec("alpha", { nats_subject: "tasks.shared" });
    const taken = otherAgent(makeSpec("beta", { nats_subject: "tasks.shared" }));
    const e = registryError(() => planRegister(cmd(mine), none, fleet({ others: [taken] }), NOW));
    expect(e).toMatchObject({ code: "conflict", status: 409 });
    expect(e.message).toContain("beta");
    const left = otherAgent(makeSpec("beta", { nats_subject: "tasks.shared" }), "deregistered");
    expect(planRegister(cmd(mine), none, fleet({ others: [left] }), NOW).agentWrite).not.toBeNull();
    // The agent's own entry in the fleet is not a conflict.
    expect(() => planRegister(cmd(mine), none, fleet({ others: [otherAgent(mine)] }), NOW)).not.toThrow();
  });

  it("refuses a capability another live type provides only under policy reject", () => {
    const mine = makeSpec("alpha", { capabilities: [{ name: "text.summarize", description: "", input_schema: {}, output_schema: {} }] });
    const theirs = otherAgent(makeSpec("beta", { capabilities: [{ name: "text.summarize", description: "", input_schema: {}, output_schema: {} }] }));
    expect(() => planRegister(cmd(mine), none, fleet({ others: [theirs] }), NOW)).not.toThrow();
    const e = registryError(() => planRegister(cmd(mine), none, fleet({ others: [theirs], duplicateCapabilities: "reject" }), NOW));
    expect(e.code).toBe("conflict");
    expect(e.message).toContain("text.summarize");
    const deregistered = { ...theirs, status: "deregistered" as const };
    expect(() => planRegister(cmd(mine), none, fleet({ others: [deregistered], duplicateCapabilities: "reject" }), NOW)).not.toThrow();
  });

  it("records the static flag and rewrites the agent when only the flag changes", () => {
    const spec = makeSpec("alpha");
    const created = planRegister(cmd(spec, { instanceId: "static", static: true }), none, fleet(), NOW);
    expect(created.agentWrite?.record.static).toBe(true);
    const flagOnly = planRegister(cmd(spec, { static: true }), { agent: storedAgent(spec), instance: null }, fleet(), NOW);
    expect(flagOnly.agentWrite?.record).toMatchObject({ static: true, registered_at: 100 });
    expect(flagOnly.specChanged).toBe(false);
    const unchanged = planRegister(cmd(spec, { static: true }), { agent: storedAgent(spec, 5, { static: true }), instance: null }, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(unchanged.agentWrite).toBeNull();
    const dropped = planRegister(cmd(spec), { agent: storedAgent(spec, 5, { static: true }), instance: null }, fleet(), NOW);
    expect(dropped.agentWrite?.record).not.toHaveProperty("static");
  });

  it("registers again over a tombstone with compare-and-set on its revision", () => {
    const spec = makeSpec("alpha");
    const plan = planRegister(cmd(spec), { agent: storedAgent(spec), instance: { record: gone, revision: 9 } }, fleet(), NOW);
    expect(plan.instanceWrite.expectedRevision).toBe(9);
    expect(plan.instanceWrite.record).toMatchObject({ registered_at: NOW, active_tasks: 0, last_heartbeat: NOW });
  });
});

describe("planHeartbeat", () => {
  it("answers unknown_instance for a missing or gone instance", () => {
    expect(registryError(() => planHeartbeat("alpha", "i1", null, {}, NOW))).toMatchObject({ code: "unknown_instance", status: 404 });
    expect(registryError(() => planHeartbeat("alpha", "i1", { record: gone, revision: 3 }, {}, NOW)).code).toBe("unknown_instance");
  });

  it("stamps the registry clock and applies status and active_tasks", () => {
    const plan = planHeartbeat("alpha", "i1", { record: live(), revision: 7 }, { status: "draining", activeTasks: 9 }, NOW);
    expect(plan).toEqual({ record: { ...live(), status: "draining", active_tasks: 9, last_heartbeat: NOW, spec_changed: false }, expectedRevision: 7 });
  });

  it("keeps status and active_tasks when the heartbeat is empty", () => {
    const plan = planHeartbeat("alpha", "i1", { record: live({ status: "registered" }), revision: 7 }, {}, NOW);
    expect(plan.record).toMatchObject({ status: "registered", active_tasks: 4, last_heartbeat: NOW });
  });

  it("leaves the stamp of a static instance alone", () => {
    const plan = planHeartbeat("alpha", "static", { record: live(), revision: 7 }, { activeTasks: 1 }, NOW);
    expect(plan.record.last_heartbeat).toBe(300);
    expect(plan.record.active_tasks).toBe(1);
  });
});

describe("planRemoval", () => {
  it("writes a tombstone with the reason over the live record's revision", () => {
    const plan = planRemoval("alpha", "i1", { record: live({ version: "1.3.0" }), revision: 11 }, "operator", NOW);
    expect(plan).toEqual({
      record: { kind: "gone", version: "1.3.0", reason: "operator", at: NOW, registered_at: 100, last_heartbeat: 300 },
      expectedRevision: 11,
    });
  });

  it("answers unknown_instance for a missing or already gone instance", () => {
    expect(registryError(() => planRemoval("alpha", "i1", null, "graceful", NOW)).code).toBe("unknown_instance");
    expect(registryError(() => planRemoval("alpha", "i1", { record: gone, revision: 2 }, "graceful", NOW)).code).toBe("unknown_instance");
  });
});

describe("sameSpec", () => {
  it("compares by content", () => {
    expect(sameSpec(makeSpec("alpha"), makeSpec("alpha"))).toBe(true);
    expect(sameSpec(makeSpec("alpha"), makeSpec("alpha", { tags: { a: "b" } }))).toBe(false);
  });

  it("ignores key order and keys holding undefined, as JSON does", () => {
    const spec = makeSpec("alpha");
    const reversed = Object.fromEntries(Object.entries(spec).reverse()) as AgentSpec;
    expect(sameSpec(spec, reversed)).toBe(true);
    expect(sameSpec(spec, { ...spec, runtime: undefined })).toBe(true);
    expect(sameSpec(spec, { ...spec, runtime: "node" })).toBe(false);
  });
});

describe("planRegister and the trust a registration verified (v1.2, docs/trust.md)", () => {
  const verified = (kid = "k1", at = NOW) => ({ verified: true as const, kid, publisher: "Acme Corp", verified_at: at });
  const beating = { record: live(), revision: 6 };

  it("writes the attestation with a new spec", () => {
    const plan = planRegister(cmd(makeSpec("alpha"), { trust: verified() }), none, fleet(), NOW);
    expect(plan.agentWrite?.record.trust).toEqual(verified());
  });

  it("rewrites an unchanged spec whose verification changed: signed later, signed by another key, or sent unsigned again", () => {
    const spec = makeSpec("alpha");
    const signedLater = planRegister(cmd(spec, { trust: verified() }), { agent: storedAgent(spec), instance: beating }, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(signedLater.agentWrite).toMatchObject({ expectedRevision: 5, record: { spec, registered_at: 100, trust: verified() } });
    expect(signedLater.specChanged).toBe(false);
    const rotated = planRegister(cmd(spec, { trust: verified("k2") }), { agent: storedAgent(spec, 5, { trust: verified("k1", 1) }), instance: beating }, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(rotated.agentWrite?.record.trust).toEqual(verified("k2"));
    const unsigned = planRegister(cmd(spec), { agent: storedAgent(spec, 5, { trust: verified("k1", 1) }), instance: beating }, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(unsigned.agentWrite).not.toBeNull();
    expect(unsigned.agentWrite?.record).not.toHaveProperty("trust");
  });

  it("writes nothing for the same spec verified by the same key again: an agent's restart does not rewrite its spec", () => {
    const spec = makeSpec("alpha");
    const plan = planRegister(cmd(spec, { trust: verified("k1", NOW) }), { agent: storedAgent(spec, 5, { trust: verified("k1", 1) }), instance: beating }, fleet({ otherLiveVersions: ["1.0.0"] }), NOW);
    expect(plan.agentWrite).toBeNull();
    expect(plan.holdsSpec).toBe(true);
  });
});
