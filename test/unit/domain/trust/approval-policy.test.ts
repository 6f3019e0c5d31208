/**
 * The approval gate's pure rules (src/domain/trust/approval-policy.ts, approval-events.ts) and
 * how the registration plan and the record shapes carry them: what approval a registration
 * writes under each policy, which decisions apply, which events a transition causes, and that a
 * stored approval of another shape is read as an unreadable record, not trusted.
 */
import { describe, expect, it } from "vitest";
import { approvalOnRegister, decide, isRoutable, sameApproval, type Approval } from "../../../../src/domain/trust/approval-policy.js";
import { approvalEvent } from "../../../../src/domain/view/approval-events.js";
import { planRegister, type FleetContext } from "../../../../src/domain/lifecycle/registration.js";
import { encodeRecord, readAgentRecord, type AgentRecord } from "../../../../src/domain/model/records.js";
import { isApprovedView } from "../../../../src/discovery/approved-view.js";
import type { AgentView } from "../../../../src/protocol/messages.js";
import { makeSpec } from "../../fixtures.js";
import { thrownRegistryError } from "../../registry-error.js";

const spec = makeSpec({ agent_type: "acme-a", tenant_scope: "acme" });
const changed = makeSpec({ agent_type: "acme-a", tenant_scope: "acme", version: "1.1.0" });
const approved: Approval = { state: "approved", by: "alice", at: 5 };
const fleet: FleetContext = { otherLiveVersions: [], others: [], duplicateCapabilities: "allow" };
const cmd = (s = spec, extra: Record<string, unknown> = {}) => ({ spec: s, instanceId: "i1", heartbeatIntervalMs: 1000, status: "ready" as const, metadata: {}, ...extra });
const stored = (approval?: Approval, s = spec): { record: AgentRecord; revision: number } => ({
  record: { kind: "agent", spec: s, registered_at: 1, updated_at: 1, ...(approval ? { approval } : {}) },
  revision: 3,
});

describe("approvalOnRegister", () => {
  it("under manual, a new spec or another one is pending, even where the stored one was approved", () => {
    expect(approvalOnRegister("manual", undefined, spec, false)).toEqual({ state: "pending" });
    expect(approvalOnRegister("manual", { spec, approval: approved }, changed, false)).toEqual({ state: "pending" });
  });
  it("keeps the state of the same spec registered again, whatever the policy, and approves by policy auto and the registry file", () => {
    expect(approvalOnRegister("manual", { spec, approval: approved }, makeSpec({ agent_type: "acme-a", tenant_scope: "acme" }), false)).toBe(approved);
    expect(approvalOnRegister("auto", { spec, approval: { state: "rejected", by: "bob", at: 2, reason: "no" } }, spec, false)).toMatchObject({ state: "rejected" });
    expect(approvalOnRegister("manual", { spec }, spec, false)).toBeUndefined();
    expect(approvalOnRegister("auto", undefined, spec, false)).toBeUndefined();
    expect(approvalOnRegister("manual", undefined, spec, true)).toBeUndefined();
    // A registry-file entry taken over by an agent is the agent's spec now: pending under manual.
    expect(approvalOnRegister("manual", { spec, static: true }, spec, false)).toEqual({ state: "pending" });
  });
  it("routes only what is approved, or carries no approval", () => {
    expect([undefined, approved, { state: "pending" as const }, { state: "rejected" as const }].map((approval) => isRoutable({ approval }))).toEqual([true, true, false, false]);
    // Approved, but withheld by trust (no longer verified under require): not routable either.
    expect(isRoutable({ approval: approved, trust_lapse: { state: "withheld", reason: "unknown_key", kid: "k", at: 1 } })).toBe(false);
    expect(isRoutable({ trust_lapse: { state: "unverified", reason: "unknown_key", kid: "k", at: 1 } })).toBe(true);
    expect(sameApproval(approved, { ...approved })).toBe(true);
    expect(sameApproval(approved, { ...approved, at: 6 })).toBe(false);
    expect(sameApproval(undefined, undefined)).toBe(true);
  });
});

describe("decide", () => {
  it("approves a pending or rejected spec and rejects a pending or approved one, stamping who, when and why", () => {
    expect(decide("acme-a", { spec, approval: { state: "pending" } }, { state: "approved", by: "alice" }, 9)).toEqual({ state: "approved", by: "alice", at: 9 });
    expect(decide("acme-a", { spec, approval: { state: "rejected", by: "bob" } }, { state: "approved", by: "alice", reason: "fixed" }, 9)).toEqual({ state: "approved", by: "alice", at: 9, reason: "fixed" });
    expect(decide("acme-a", { spec, approval: approved }, { state: "rejected", by: "carol", reason: "withdrawn" }, 9)).toMatchObject({ state: "rejected", reason: "withdrawn" });
    expect(decide("acme-a", { spec }, { state: "rejected", by: "carol", reason: "x" }, 9)).toMatchObject({ state: "rejected" });
  });
  it("refuses with 409 another version than the stored one, a registry-file entry, and a decision that changes nothing", () => {
    expect(thrownRegistryError(() => decide("acme-a", { spec, approval: { state: "pending" } }, { state: "approved", by: "a", version: "2.0.0" }, 9))).toMatchObject({ code: "conflict" });
    expect(thrownRegistryError(() => decide("acme-a", { spec, static: true }, { state: "approved", by: "a" }, 9))).toMatchObject({ code: "conflict" });
    expect(thrownRegistryError(() => decide("acme-a", { spec }, { state: "approved", by: "a" }, 9))).toMatchObject({ code: "conflict", message: "acme-a 1.0.0 is already approved" });
  });
});

describe("approvalEvent", () => {
  it("says pending when a spec starts waiting or another spec replaces the waiting one, and nothing when the same spec stays pending", () => {
    expect(approvalEvent("acme-a", spec, undefined, { state: "pending" }, 4)).toMatchObject({ type: "registry.agent.pending", subject: "acme-a", data: { version: "1.0.0", tenant_scope: "acme", state: "pending", by: null, reason: null, revision: 4 } });
    expect(approvalEvent("acme-a", changed, { spec, approval: { state: "pending" } }, { state: "pending" }, 5)?.type).toBe("registry.agent.pending");
    expect(approvalEvent("acme-a", spec, { spec, approval: { state: "pending" } }, { state: "pending" }, 5)).toBeUndefined();
  });
  it("says approved or rejected once per decision, and nothing under auto", () => {
    expect(approvalEvent("acme-a", spec, { spec, approval: { state: "pending" } }, approved, 6)).toMatchObject({ type: "registry.agent.approved", data: { by: "alice" } });
    expect(approvalEvent("acme-a", spec, { spec, approval: approved }, approved, 7)).toBeUndefined();
    expect(approvalEvent("acme-a", spec, { spec, approval: approved }, { state: "rejected", by: "b", at: 8, reason: "r" }, 8)).toMatchObject({ type: "registry.agent.rejected", data: { reason: "r" } });
    expect(approvalEvent("acme-a", spec, undefined, undefined, 9)).toBeUndefined();
  });
});

describe("planRegister under policy manual", () => {
  it("writes a new type pending, keeps an unchanged spec's approval without a write, and writes a changed spec pending", () => {
    const first = planRegister(cmd(spec, { approvalPolicy: "manual" }), { agent: null, instance: null }, fleet, 10);
    expect(first.agentWrite?.record.approval).toEqual({ state: "pending" });
    expect(first.approval).toEqual({ state: "pending" });
    // a live instance of the type, so the record is not rewritten to revive it
    const busy = { ...fleet, otherLiveVersions: ["1.0.0"] };
    const again = planRegister(cmd(spec, { approvalPolicy: "manual" }), { agent: stored(approved), instance: null }, busy, 11);
    expect(again.agentWrite).toBeNull();
    expect(again.approval).toBe(approved);
    const next = planRegister(cmd(changed, { approvalPolicy: "manual" }), { agent: stored(approved), instance: null }, busy, 12);
    expect(next.agentWrite?.record.approval).toEqual({ state: "pending" });
  });
  it("under auto (the default) writes no approval: the record is v1.1's", () => {
    const plan = planRegister(cmd(), { agent: null, instance: null }, fleet, 10);
    expect(plan.agentWrite?.record).not.toHaveProperty("approval");
    expect(plan.approval).toBeUndefined();
  });
});

describe("a stored approval", () => {
  it("round-trips, and a record whose approval has another shape is unreadable", () => {
    const record: AgentRecord = { kind: "agent", spec, registered_at: 1, updated_at: 1, approval: { state: "rejected", by: "alice", at: 3, reason: "no" } };
    expect(readAgentRecord(encodeRecord(record))).toEqual(record);
    const bad = new TextEncoder().encode(JSON.stringify({ ...record, approval: { state: "maybe" } }));
    expect(typeof readAgentRecord(bad)).toBe("string");
  });
});

describe("the discovery front's filter", () => {
  it("keeps approved views and those with no approval, and leaves out pending and rejected ones", () => {
    const view = (approval?: AgentView["approval"]) => ({ agent_type: "x", ...(approval ? { approval } : {}) }) as AgentView;
    expect([view(), view({ state: "approved", by: "a" }), view({ state: "pending" }), view({ state: "rejected" })].map(isApprovedView)).toEqual([true, true, false, false]);
  });
});
