/**
 * Stream messages as audit rows (src/audit/event-rows.ts): typed columns, the tenant each event
 * belongs to, U+0000 removed, and messages that are not CloudEvents kept one to one.
 */
import { describe, expect, it } from "vitest";
import { HIDDEN_TENANT, TenantBook, toRow, withoutNul } from "../../../src/audit/event-rows.js";

const event = (type: string, subject: string, data: object, id = `${type}-${subject}`) =>
  JSON.stringify({ specversion: "1.0", id, source: "agent-registry", type, time: "2026-11-23T10:00:00.000Z", subject, datacontenttype: "application/json", data });

describe("toRow", () => {
  it("fills the columns history filters on", () => {
    const row = toRow(7, event("registry.agent.registered", "summarizer", { tenant_scope: null, version: "1.0.0" }), new TenantBook());
    expect(row).toMatchObject({ seq: 7, eventId: "registry.agent.registered-summarizer", type: "registry.agent.registered", subject: "summarizer", agentType: "summarizer", capability: null, tenant: null, nulStripped: false });
    expect(row.time?.toISOString()).toBe("2026-11-23T10:00:00.000Z");
    expect(JSON.parse(row.eventJson)).toMatchObject({ data: { version: "1.0.0" } });
  });

  it("gives an agent's later events the tenant of its last registration", () => {
    const book = new TenantBook();
    toRow(1, event("registry.agent.registered", "acme-bot", { tenant_scope: "acme" }), book);
    expect(toRow(2, event("registry.agent.deregistered", "acme-bot", { reason: "evicted" }), book).tenant).toBe("acme");
    toRow(3, event("registry.agent.registered", "acme-bot", { tenant_scope: null }), book);
    expect(toRow(4, event("registry.agent.status_changed", "acme-bot", {}), book).tenant).toBeNull();
  });

  it("gives the approval gate's events (v1.2) their tenant, though a pending event comes before the agent's registered event", () => {
    const book = new TenantBook();
    const pending = toRow(1, event("registry.agent.pending", "acme-bot", { agent_type: "acme-bot", version: "1.0.0", tenant_scope: "acme", state: "pending", by: null, reason: null }), book);
    expect(pending).toMatchObject({ type: "registry.agent.pending", agentType: "acme-bot", tenant: "acme" });
    expect(toRow(2, event("registry.agent.registered", "acme-bot", { tenant_scope: "acme" }), book).tenant).toBe("acme");
    const rejected = toRow(3, event("registry.agent.rejected", "acme-bot", { tenant_scope: "acme", state: "rejected", by: "alice", reason: "unvetted" }), book);
    expect(rejected).toMatchObject({ agentType: "acme-bot", tenant: "acme" });
    expect(JSON.parse(rejected.eventJson)).toMatchObject({ data: { by: "alice", reason: "unvetted" } });
    expect(toRow(4, event("registry.agent.approved", "shared-bot", { tenant_scope: null, state: "approved", by: "alice", reason: null }), book).tenant).toBeNull();
  });

  it("keeps a tenant's trust roots event (v1.2) for operators: mirrored, hidden from the tenant's own history", () => {
    const row = toRow(1, event("registry.trust.roots_changed", "acme", { tenant: "acme", change: "set", mode: "require", approval: "auto", kids: ["k1"], by: "alice", revision: 3 }), new TenantBook());
    expect(row).toMatchObject({ type: "registry.trust.roots_changed", subject: "acme", agentType: null, capability: null, tenant: HIDDEN_TENANT });
  });

  it("hides the events of an agent type whose registration it never saw", () => {
    expect(toRow(1, event("registry.agent.deregistered", "unknown", {}), new TenantBook()).tenant).toBe(HIDDEN_TENANT);
  });

  it("gives a capability event its providers' tenant, hidden when they are of several, the last known when none is left", () => {
    const book = new TenantBook();
    book.agents.set("a", "acme");
    book.agents.set("b", null);
    book.agents.set("c", "other");
    expect(toRow(1, event("registry.capability.changed", "x.run", { providers: ["a", "b"] }), book).tenant).toBe("acme");
    expect(toRow(2, event("registry.capability.changed", "x.run", { providers: [] }), book).tenant).toBe("acme");
    expect(toRow(3, event("registry.capability.changed", "y.run", { providers: ["b"] }), book).tenant).toBeNull();
    expect(toRow(4, event("registry.capability.changed", "z.run", { providers: ["a", "c"] }), book).tenant).toBe(HIDDEN_TENANT);
    expect(toRow(5, event("registry.capability.changed", "z.run", { providers: ["a"] }), book).capability).toBe("z.run");
  });

  it("shares fleet alerts, and hides what is not an event of ours", () => {
    expect(toRow(1, event("registry.alert.audit_gap", "audit_gap", {}), new TenantBook()).tenant).toBeNull();
    expect(toRow(2, event("other.thing", "x", {}), new TenantBook()).tenant).toBe(HIDDEN_TENANT);
  });

  it("keeps a message that is not a CloudEvent, so rows and stream sequences stay one to one", () => {
    for (const text of ["not json", "[1,2]", "null", "\u0000"]) {
      const row = toRow(9, text, new TenantBook());
      expect(row).toMatchObject({ seq: 9, eventId: null, type: null, tenant: HIDDEN_TENANT });
      expect(JSON.parse(row.eventJson)).toEqual({ unparsed: text.replaceAll("\u0000", "") });
    }
  });

  it("removes U+0000 from strings and keys, and says so", () => {
    const row = toRow(1, event("registry.alert.x", "n\u0000ul", { "k\u0000": ["a\u0000", 1, { b: "\u0000" }] }), new TenantBook());
    expect(row.nulStripped).toBe(true);
    expect(row.eventJson).not.toContain("\\u0000");
    expect(row.subject).toBe("nul");
    expect(JSON.parse(row.eventJson).data).toEqual({ k: ["a", 1, { b: "" }] });
    expect(withoutNul({ a: "b", n: 1 })).toEqual({ value: { a: "b", n: 1 }, stripped: false });
  });

  it("stores a time it cannot read as null", () => {
    const row = toRow(1, JSON.stringify({ id: "x", type: "registry.alert.x", time: "yesterday", subject: "s", data: {} }), new TenantBook());
    expect(row.time).toBeNull();
  });
});
