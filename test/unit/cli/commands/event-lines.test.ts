/**
 * Every event type of the protocol reads as words, not as JSON, in both places a person sees
 * events: `agent-registry watch` (and `history`, which prints as it does) and the web page's
 * event lines. The samples are typed by the protocol's EventData, so a new event type does not
 * compile here until it has one.
 */
import { describe, expect, it } from "vitest";
import { formatEvent } from "../../../../src/cli/commands/watch.js";
import { EVENT_TYPES, toCloudEvent, type EventData, type EventType } from "../../../../src/protocol/events.js";
import type { RegistryEvent } from "../../../../src/protocol/events.js";
import { eventDetail } from "../../../../src/ui/web/event-text.js";

const dependency = { type: "agent" as const, name: "dep-db", version: "1.0.0" };

/** A sample of each type's data, and words its line must carry. */
const SAMPLES: { [T in EventType]: { subject: string; data: EventData[T]; says: string[] } } = {
  "registry.agent.registered": {
    subject: "summarizer",
    data: { agent_type: "summarizer", version: "1.2.0", instance_id: "i1", tenant_scope: null, first_instance: true, spec_changed: true, revision: 5 },
    says: ["i1", "1.2.0", "first instance"],
  },
  "registry.agent.deregistered": {
    subject: "summarizer",
    data: { agent_type: "summarizer", instance_id: "i1", reason: "evicted", agent_removed: true, last_heartbeat: "2026-01-01T00:00:00.000Z", revision: 6 },
    says: ["i1", "evicted"],
  },
  "registry.agent.status_changed": {
    subject: "summarizer",
    data: { agent_type: "summarizer", instance_id: "i1", from: "ready", to: "draining", revision: 7 },
    says: ["i1", "ready", "draining"],
  },
  "registry.capability.changed": {
    subject: "text.summarize",
    data: { capability: "text.summarize", change: "removed", providers: [], revision: 8 },
    says: ["removed", "providers: none"],
  },
  "registry.agent.dependency_lost": {
    subject: "dep-api",
    data: { agent_type: "dep-api", dependency, node: "agent:dep-db@1.0.0", state: "version_mismatch", providers: [], revision: 9 },
    says: ["lost agent:dep-db@1.0.0: version mismatch"],
  },
  "registry.agent.dependency_restored": {
    subject: "dep-api",
    data: { agent_type: "dep-api", dependency, node: "agent:dep-db@1.0.0", state: "live", providers: ["dep-db"], revision: 10 },
    says: ["agent:dep-db@1.0.0 is live again (provided by dep-db)"],
  },
  "registry.agent.pending": {
    subject: "acme-invoices",
    data: { agent_type: "acme-invoices", version: "2.0.0", tenant_scope: "acme", state: "pending", by: null, reason: null, revision: 11 },
    says: ["2.0.0", "waits for an operator's approval"],
  },
  "registry.agent.approved": {
    subject: "acme-invoices",
    data: { agent_type: "acme-invoices", version: "2.0.0", tenant_scope: "acme", state: "approved", by: "alice", reason: null, revision: 12 },
    says: ["2.0.0", "approved by alice"],
  },
  "registry.agent.rejected": {
    subject: "acme-invoices",
    data: { agent_type: "acme-invoices", version: "2.0.0", tenant_scope: "acme", state: "rejected", by: "alice", reason: "calls an unvetted API", revision: 13 },
    says: ["2.0.0", "rejected by alice: calls an unvetted API"],
  },
  "registry.agent.trust_changed": {
    subject: "acme-summarizer",
    data: { agent_type: "acme-summarizer", version: "1.0.0", tenant_scope: "acme", previous_state: "verified", state: "withheld", kid: "acme-2026", publisher: "Acme Corp", reason: "unknown_key", revision: 21 },
    says: ["1.0.0", "verified -> withheld (unknown_key, key acme-2026)"],
  },
  "registry.trust.roots_changed": {
    subject: "acme",
    data: { tenant: "acme", change: "set", mode: "require", approval: "auto", kids: ["acme-2026"], by: "alice", revision: 22 },
    says: ["trust roots set: mode require, approval auto, keys acme-2026 by alice"],
  },
  "registry.agent.deprecated": {
    subject: "summarizer",
    data: { agent_type: "summarizer", version: "1.4.0", tenant_scope: null, deprecated: true, by: "alice", reason: "replaced by summarizer-v2", successor: "summarizer-v2", revision: 30 },
    says: ["1.4.0", "deprecated by alice: replaced by summarizer-v2", "use summarizer-v2"],
  },
  "registry.agent.undeprecated": {
    subject: "summarizer",
    data: { agent_type: "summarizer", version: "1.4.0", tenant_scope: null, deprecated: false, by: "bob", reason: "v2 rolled back", successor: null, revision: 31 },
    says: ["1.4.0", "no longer deprecated", "bob", "v2 rolled back"],
  },
  "registry.agent.heartbeat": {
    subject: "summarizer",
    data: { agent_type: "summarizer", instance_id: "i1", status: "ready", active_tasks: 2 },
    says: ["i1", "ready", "2"],
  },
  "registry.alert.self_preservation": {
    subject: "self_preservation",
    data: { active: true, overdue: 15, live: 20, ratio: 0.75, threshold: 0.5 },
    says: ["evictions paused", "15 of 20 live instances overdue", "threshold 0.5"],
  },
  "registry.alert.audit_gap": {
    subject: "audit_gap",
    data: { stream: "REGISTRY_EVENTS", first_seq: 5, last_seq: 9, missing: 5 },
    says: ["5 events of REGISTRY_EVENTS never mirrored", "#5 to #9"],
  },
};

const sample = (type: EventType) => {
  const s = SAMPLES[type];
  return { event: toCloudEvent(type, "1-0", s.subject, s.data, Date.UTC(2026, 0, 1)) as RegistryEvent, says: s.says };
};

describe("every event type has a readable line", () => {
  it.each(EVENT_TYPES)("in watch's output: %s", (type) => {
    const { event, says } = sample(type);
    const line = formatEvent({ seq: 42, event });
    expect(line).toMatch(new RegExp(`^2026-01-01T00:00:00\\.000Z  #42  ${type.replace(/^registry\./, "")} +${event.subject}  \\S`));
    expect(line, "no JSON in the line").not.toMatch(/[{}"]/);
    for (const words of says) expect(line).toContain(words);
  });

  it.each(EVENT_TYPES)("on the web page: %s", (type) => {
    const { event, says } = sample(type);
    const detail = eventDetail(event);
    expect(detail, "no JSON in the line").not.toMatch(/[{}"]/);
    for (const words of says) expect(detail).toContain(words);
  });

  it("a type the protocol does not name shows its fields in words, never JSON, and data left out of a history page shows nothing", () => {
    expect(eventDetail({ type: "example.other", data: { a: 1 } })).toBe("a 1");
    expect(eventDetail({ type: "constructor", data: { a: 1 } })).toBe("a 1");
    // An event of a type a newer registry might publish: agent_type is the line's subject, revision noise.
    const approval = { agent_type: "pg-api", instance_id: "i1", approved_by: "ops", reasons: ["signed", "reviewed"], card: { name: "x", skills: [] }, revision: 9 };
    const detail = eventDetail({ type: "registry.agent.certified", data: approval });
    expect(detail).toBe("instance id i1, approved by ops, reasons signed, reviewed, card 2 fields");
    expect(detail).not.toMatch(/[{}"]/);
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, "x".repeat(200)]));
    const long = eventDetail({ type: "example.many", data: many });
    expect(long).toMatch(/, and 4 more fields$/);
    expect(long).toContain(`f0 ${"x".repeat(80)}…`);
    expect(eventDetail({ type: "example.empty", data: {} })).toBe("(no details)");
    expect(eventDetail({ type: "example.list", data: [1, 2] })).toBe("(no data)");
    expect(eventDetail({ type: "registry.agent.registered" })).toBe("(no data)");
  });
});
