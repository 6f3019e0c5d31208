import { describe, expect, it } from "vitest";
import { isOrphanClaim, ownerName, planClaim } from "../../../../src/domain/lifecycle/subject-claim.js";
import type { AgentState, AgentStatus } from "../../../../src/domain/model/model.js";
import { parseKey } from "../../../../src/domain/model/records.js";
import {
  decodeClaim,
  encodeClaim,
  isSubjectClaimKey,
  SubjectClaimBook,
  subjectClaimKey,
  type StoredClaim,
  type SubjectClaimRecord,
} from "../../../../src/domain/model/subject-claims.js";
import { agentSpecSchema, type AgentSpec } from "../../../../src/domain/spec/spec.js";
import { thrownRegistryError } from "../../registry-error.js";

const NOW = 7_000;

function makeSpec(type: string, extra: Record<string, unknown> = {}): AgentSpec {
  return agentSpecSchema.parse({
    agent_type: type,
    version: "1.0.0",
    description: "",
    owner_team: "team",
    capabilities: [{ name: `${type}.run`, description: "", input_schema: {}, output_schema: {} }],
    nats_subject: "tasks.shared",
    consumer_group: type,
    ...extra,
  });
}

const agent = (spec: AgentSpec, status: AgentStatus = "ready"): AgentState => ({
  agent_type: spec.agent_type, spec, registered_at: 0, revision: 1, instances: new Map(), status, deregistered_at: null,
});

const claim = (agentType: string, revision = 3, extra: Partial<SubjectClaimRecord> = {}): StoredClaim => ({
  record: { kind: "subject_claim", subject: "tasks.shared", agent_type: agentType, tenant_scope: null, at: 100, ...extra },
  revision,
});

describe("planClaim", () => {
  it("creates the claim when the subject has none", () => {
    expect(planClaim(makeSpec("alpha"), null, [], false, NOW)).toEqual({
      record: { kind: "subject_claim", subject: "tasks.shared", agent_type: "alpha", tenant_scope: null, at: NOW },
      expectedRevision: 0,
    });
  });

  it("leaves its own claim alone unless the spec is written, then rewrites it on its revision", () => {
    expect(planClaim(makeSpec("alpha"), claim("alpha"), [], false, NOW)).toBeNull();
    expect(planClaim(makeSpec("alpha"), claim("alpha"), [], true, NOW)).toEqual({
      record: { kind: "subject_claim", subject: "tasks.shared", agent_type: "alpha", tenant_scope: null, at: 100 },
      expectedRevision: 3,
    });
    // A new tenant_scope is written into the claim, so conflicts name the owner to the right tenant.
    expect(planClaim(makeSpec("alpha", { tenant_scope: "acme" }), claim("alpha"), [], false, NOW)?.record.tenant_scope).toBe("acme");
  });

  it("refuses a subject another type claimed, live or down", () => {
    const live = thrownRegistryError(() => planClaim(makeSpec("beta"), claim("alpha"), [agent(makeSpec("alpha"))], false, NOW));
    expect(live).toMatchObject({ code: "conflict", status: 409, message: "nats_subject tasks.shared is already used by agent type alpha" });
    const down = thrownRegistryError(() => planClaim(makeSpec("beta"), claim("alpha"), [agent(makeSpec("alpha"), "deregistered")], false, NOW));
    expect(down.message).toMatch(/^nats_subject tasks.shared is already used by agent type alpha; it is kept for that type while it is down/);
  });

  it("falls back to the view's live types when the store has no claim (a store from before claims)", () => {
    const e = thrownRegistryError(() => planClaim(makeSpec("beta"), null, [agent(makeSpec("alpha"))], false, NOW));
    expect(e.code).toBe("conflict");
    expect(planClaim(makeSpec("beta"), null, [agent(makeSpec("alpha"), "deregistered")], false, NOW)?.expectedRevision).toBe(0);
    expect(planClaim(makeSpec("beta"), null, [agent(makeSpec("alpha", { nats_subject: "tasks.other" }))], false, NOW)).not.toBeNull();
  });

  it("names the owner only to its own tenant and to everyone when it is shared", () => {
    const acme = claim("acme-bot", 3, { tenant_scope: "acme" });
    expect(thrownRegistryError(() => planClaim(makeSpec("globex-bot", { tenant_scope: "globex" }), acme, [], false, NOW)).message).toBe(
      "nats_subject tasks.shared is already used by another agent type; it is kept for that type while it is down, until the type is removed after the retention period",
    );
    expect(thrownRegistryError(() => planClaim(makeSpec("shared-bot"), acme, [], false, NOW)).message).not.toContain("acme");
    expect(thrownRegistryError(() => planClaim(makeSpec("acme-two", { tenant_scope: "acme" }), acme, [], false, NOW)).message).toContain("acme-bot");
    const fallback = thrownRegistryError(() => planClaim(makeSpec("globex-bot", { tenant_scope: "globex" }), null, [agent(makeSpec("acme-bot", { tenant_scope: "acme" }))], false, NOW));
    expect(fallback.message).toBe("nats_subject tasks.shared is already used by another agent type");
    expect(ownerName("alpha", null, "acme")).toBe("agent type alpha");
  });
});

describe("claim keys and records", () => {
  it("keeps a plain subject readable and encodes any other into one KV-safe token", () => {
    expect(subjectClaimKey("agent.tasks.code-reviewer")).toBe("_registry.subjects.agent.tasks.code-reviewer");
    const odd = subjectClaimKey("tâches.résumé:v1");
    expect(odd).toMatch(/^_registry\.subjects\.=[A-Za-z0-9_-]+$/);
    // Decodes back to the subject: an operator can read it.
    const token = odd.slice("_registry.subjects.=".length).replace(/-/g, "+").replace(/_/g, "/");
    expect(new TextDecoder().decode(Uint8Array.from(atob(token), (ch) => ch.charCodeAt(0)))).toBe("tâches.résumé:v1");
    expect(subjectClaimKey("a.b")).not.toBe(subjectClaimKey("a/b"));
    expect(isSubjectClaimKey(odd)).toBe(true);
    expect(isSubjectClaimKey("_registry.evictor")).toBe(false);
    expect(parseKey(odd)).toMatchObject({ kind: "reserved" });
  });

  it("decodes what it encodes and refuses other shapes", () => {
    const record: SubjectClaimRecord = { kind: "subject_claim", subject: "s", agent_type: "a", tenant_scope: "t", at: 1 };
    expect(decodeClaim(encodeClaim(record))).toEqual(record);
    expect(decodeClaim(new TextEncoder().encode('{"holder":"x"}'))).toBeNull();
    expect(decodeClaim(new TextEncoder().encode("not json"))).toBeNull();
  });

  it("keeps the book in step with puts and deletes, counting what does not decode", () => {
    const book = new SubjectClaimBook();
    const key = subjectClaimKey("tasks.shared");
    const entry = (revision: number, operation: "PUT" | "DEL", value: Uint8Array) => ({ key, revision, operation, value, created: 0 });
    book.apply(entry(1, "PUT", encodeClaim(claim("alpha").record)));
    expect(book.forSubject("tasks.shared")).toMatchObject({ revision: 1, record: { agent_type: "alpha" } });
    book.apply(entry(2, "DEL", new Uint8Array()));
    expect(book.size).toBe(0);
    book.apply(entry(3, "PUT", new TextEncoder().encode("{}")));
    expect(book.undecodable).toBe(1);
    expect(book.size).toBe(0);
  });

  it("calls a claim an orphan when no stored spec of its owner names the subject", () => {
    expect(isOrphanClaim(claim("alpha").record, undefined)).toBe(true);
    expect(isOrphanClaim(claim("alpha").record, agent(makeSpec("alpha", { nats_subject: "tasks.moved" })))).toBe(true);
    expect(isOrphanClaim(claim("alpha").record, agent(makeSpec("alpha"), "deregistered"))).toBe(false);
  });
});
