/**
 * Signed specs, cards and tool specs against a tenant's trust roots (docs/trust.md): signatures made by an
 * independent implementation (Python's `cryptography`) verify, and every hostile variant is
 * refused with its reason. The gate is driven as registration drives it: bounds first, then
 * the judgement once the spec's tenant is known.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { RegistryError } from "../../../../src/domain/errors.js";
import type { AgentSpec } from "../../../../src/domain/spec/spec.js";
import { trustDocument, matchesAgentType } from "../../../../src/domain/trust/trust-document.js";
import { trustRootsOf, type TrustRoots } from "../../../../src/domain/trust/trust-roots.js";
import { MAX_SIGNATURES } from "../../../../src/domain/trust/presented-signatures.js";
import { TrustGate } from "../../../../src/service/registration/trust-gate.js";
import { jcs, pythonSign, type Signed } from "../../../harness/independent-signer.js";

const NOW = Date.parse("2026-06-01T00:00:00Z");
const specBody = { agent_type: "acme-summarizer", version: "1.0.0", description: "Summarizes", tenant_scope: "acme", capabilities: [{ name: "summarize", description: "s" }] };
const card = { name: "Acme Summarizer", description: "Summarizes", version: "1.0.0", url: "https://acme.example/a2a", skills: [{ id: "summarize", name: "Summarize" }] };
const specOf = (tenant: string | null, agentType = "acme-summarizer") => ({ agent_type: agentType, tenant_scope: tenant }) as unknown as AgentSpec;

let acme: Signed;
let card1: Signed;
let attacker: Signed;
let old: Signed;

async function rootsWith(modes: { acme?: string; shared?: string } = {}): Promise<TrustRoots> {
  const doc = trustDocument.parse({
    tenants: {
      acme: {
        mode: modes.acme ?? "require",
        jwks: { keys: [acme.jwk, card1.jwk, old.jwk] },
        signers: [
          { kid: "acme-2026", publisher: "Acme Corp", agent_types: ["acme-*"] },
          { kid: "acme-cards", publisher: "Acme Corp", agent_types: ["acme-*"] },
          { kid: "acme-2024", publisher: "Acme Corp", agent_types: ["acme-*"], not_after: "2025-01-01T00:00:00Z" },
        ],
      },
    },
    ...(modes.shared ? { shared: { mode: modes.shared, jwks: { keys: [acme.jwk] }, signers: [{ kid: "acme-2026", publisher: "Acme Corp", agent_types: ["*"] }] } } : {}),
  });
  return trustRootsOf(doc, async () => ({ keys: [] }));
}

/** The judgement of a body, as registration runs it; the refusal's issue message, or the attestation. */
async function judge(roots: TrustRoots, body: Record<string, unknown>, spec = specOf("acme")): Promise<string | object | undefined> {
  const gate = new TrustGate(roots);
  try {
    return (await gate.judge(gate.presented(body, spec.tenant_scope ?? null), body, spec, NOW))?.trust;
  } catch (e) {
    if (!(e instanceof RegistryError)) throw e;
    expect(e.code).toBe("invalid_request");
    return `${e.issues?.[0]?.path} ${e.issues?.[0]?.message}`;
  }
}

const signSpec = (key: Signed, protectedHeader: Record<string, unknown>, payload = jcs(specBody)) =>
  pythonSign({ key: protectedHeader["alg"] === "EdDSA" ? "EdDSA" : "ES256", pem: key.pem, protected: protectedHeader, payload });

describe("signed specs and cards", () => {
  beforeAll(() => {
    acme = pythonSign({ key: "ES256", protected: { alg: "ES256", kid: "acme-2026" }, payload: jcs(specBody) });
    const { signatures: _none, ...unsignedCard } = card as Record<string, unknown>;
    card1 = pythonSign({ key: "EdDSA", protected: { alg: "EdDSA", kid: "acme-cards" }, payload: jcs(unsignedCard) });
    attacker = pythonSign({ key: "ES256", protected: { alg: "ES256", kid: "evil" }, payload: jcs(specBody) });
    old = pythonSign({ key: "ES256", protected: { alg: "ES256", kid: "acme-2024" }, payload: jcs(specBody) });
  });

  it("verifies a spec signed by Python (ES256) and records key id, publisher and time", async () => {
    const r = await judge(await rootsWith(), { spec: specBody, signature: { protected: acme.protected, signature: acme.signature } });
    expect(r).toEqual({ verified: true, kid: "acme-2026", publisher: "Acme Corp", verified_at: NOW });
  });

  it("verifies an A2A card signed by Python (EdDSA) over its JCS form without signatures", async () => {
    const body = { a2a_card: { ...card, signatures: [{ protected: card1.protected, signature: card1.signature }] } };
    expect(await judge(await rootsWith(), body)).toEqual({ verified: true, kid: "acme-cards", publisher: "Acme Corp", verified_at: NOW });
  });

  it("refuses a tampered byte in the spec and in the signature", async () => {
    const roots = await rootsWith();
    const sig = { protected: acme.protected, signature: acme.signature };
    expect(await judge(roots, { spec: { ...specBody, description: "Summarizez" }, signature: sig })).toMatch(/^signature\.signature bad_signature/);
    const broken = acme.signature.slice(0, 5) + (acme.signature[5] === "A" ? "B" : "A") + acme.signature.slice(6);
    expect(await judge(roots, { spec: specBody, signature: { ...sig, signature: broken } })).toMatch(/bad_signature/);
  });

  it("refuses alg none, and an alg other than the key's", async () => {
    const roots = await rootsWith();
    const none = Buffer.from(JSON.stringify({ alg: "none", kid: "acme-2026" })).toString("base64url");
    expect(await judge(roots, { spec: specBody, signature: { protected: none, signature: "AA" } })).toMatch(/alg_not_allowed/);
    const hs = Buffer.from(JSON.stringify({ alg: "HS256", kid: "acme-2026" })).toString("base64url");
    expect(await judge(roots, { spec: specBody, signature: { protected: hs, signature: acme.signature } })).toMatch(/alg_not_allowed/);
  });

  it("never takes a key from jku, jwk or x5u: the attacker's own key is unknown, and the trusted kid does not verify the attacker's signature", async () => {
    const roots = await rootsWith();
    const viaJku = signSpec(attacker, { alg: "ES256", kid: "evil", jku: "https://evil.example/jwks.json" });
    expect(await judge(roots, { spec: specBody, signature: { protected: viaJku.protected, signature: viaJku.signature } })).toMatch(/unknown_key/);
    const borrowed = signSpec(attacker, { alg: "ES256", kid: "acme-2026", jwk: attacker.jwk, x5u: "https://evil.example/cert.pem" });
    expect(await judge(roots, { spec: specBody, signature: { protected: borrowed.protected, signature: borrowed.signature } })).toMatch(/bad_signature/);
  });

  it("refuses a wrong kid, a missing kid and a key not granted for the agent type", async () => {
    const roots = await rootsWith();
    const wrong = signSpec(acme, { alg: "ES256", kid: "acme-cards" });
    expect(await judge(roots, { spec: specBody, signature: { protected: wrong.protected, signature: wrong.signature } })).toMatch(/alg_not_allowed: alg "ES256"; key acme-cards verifies EdDSA only/);
    const swapped = signSpec(acme, { alg: "ES256", kid: "acme-2024" });
    expect(await judge(roots, { spec: specBody, signature: { protected: swapped.protected, signature: swapped.signature } })).toMatch(/key_expired/);
    const unnamed = signSpec(acme, { alg: "ES256" });
    expect(await judge(roots, { spec: specBody, signature: { protected: unnamed.protected, signature: unnamed.signature } })).toMatch(/missing_kid/);
    const sig = { protected: acme.protected, signature: acme.signature };
    expect(await judge(roots, { spec: specBody, signature: sig }, specOf("acme", "globex-bot"))).toMatch(/not_authorized: key acme-2026 may not sign for agent type globex-bot/);
  });

  it("refuses a key past its not_after", async () => {
    expect(await judge(await rootsWith(), { spec: specBody, signature: { protected: old.protected, signature: old.signature } })).toMatch(/key_expired/);
  });

  it("refuses a signature over a non-canonical form of the same spec", async () => {
    const pretty = signSpec(acme, { alg: "ES256", kid: "acme-2026" }, JSON.stringify(specBody, null, 2));
    expect(await judge(await rootsWith(), { spec: specBody, signature: { protected: pretty.protected, signature: pretty.signature } })).toMatch(/bad_signature/);
  });

  it("refuses a huge signatures array by its length and nested values by their shape", async () => {
    const roots = await rootsWith();
    const huge = Array.from({ length: 100_000 }, () => ({ protected: card1.protected, signature: card1.signature }));
    expect(await judge(roots, { a2a_card: { ...card, signatures: huge } })).toMatch(new RegExp(`too_many_signatures: 100000 signatures; at most ${MAX_SIGNATURES}`));
    let deep: unknown = "x";
    for (let i = 0; i < 50; i++) deep = { a: deep };
    const nested = { protected: card1.protected, signature: card1.signature, header: { kid: deep } };
    expect(await judge(roots, { a2a_card: { ...card, signatures: [nested] } })).toMatch(/a2a_card\.signatures\.0\.header\.kid malformed_signature/);
    expect(await judge(roots, { a2a_card: { ...card, signatures: [[[[["x"]]]]] } })).toMatch(/malformed_signature/);
    expect(await judge(roots, { spec: specBody, signature: { protected: acme.protected, signature: acme.signature, extra: {} } })).toMatch(/signature\.extra malformed_signature/);
  });

  it("refuses signatures out of bounds before validation when the tenant they name verifies", async () => {
    const gate = new TrustGate(await rootsWith());
    const many = { a2a_card: { ...card, signatures: Array.from({ length: 50 }, () => ({})) } };
    expect(() => gate.presented(many, "acme")).toThrow(/too_many_signatures/);
    expect(() => gate.presented({ spec: specBody, signature: "x" })).toThrow(/malformed_signature/);
    expect(gate.presented(many, "globex")).toMatchObject({ refused: expect.any(RegistryError) });
  });

  it("verifies a tool spec signed by Python over its JCS form with the agent type and the fields beside it, and refuses it moved to another agent type or subject", async () => {
    const toolBody = {
      mcp_toolspec: { tools: [{ name: "summarize", description: "Summarizes", inputSchema: { type: "object" } }] },
      version: "1.0.0",
      description: "Summarizes",
      nats_subject: "acme.tools.summarize",
    };
    const signed = signSpec(acme, { alg: "ES256", kid: "acme-2026" }, jcs({ ...toolBody, agent_type: "acme-summarizer" }));
    const signature = { protected: signed.protected, signature: signed.signature };
    const roots = await rootsWith();
    expect(await judge(roots, { ...toolBody, signature })).toEqual({ verified: true, kid: "acme-2026", publisher: "Acme Corp", verified_at: NOW });
    // The same body sent on another agent type's subject, or with requests sent elsewhere: not what was signed.
    expect(await judge(roots, { ...toolBody, signature }, specOf("acme", "acme-other"))).toMatch(/^signature\.signature bad_signature/);
    expect(await judge(roots, { ...toolBody, nats_subject: "evil.tasks", signature })).toMatch(/bad_signature/);
    expect(await judge(roots, toolBody)).toMatch(/^signature signature_required/);
  });

  it("refuses fields beside a signed card that its signature does not cover", async () => {
    const body = { a2a_card: { ...card, signatures: [{ protected: card1.protected, signature: card1.signature }] }, nats_subject: "evil.tasks" };
    expect(await judge(await rootsWith(), body)).toMatch(/^nats_subject unsigned_fields/);
  });

  it("modes: require refuses unsigned, verify-if-present stores it unverified yet refuses a bad signature, off ignores signatures", async () => {
    expect(await judge(await rootsWith({ acme: "require" }), { spec: specBody })).toMatch(/signature_required/);
    const lenient = await rootsWith({ acme: "verify-if-present" });
    expect(await judge(lenient, { spec: specBody })).toBeUndefined();
    expect(await judge(lenient, { spec: specBody, signature: { protected: old.protected, signature: old.signature } })).toMatch(/key_expired/);
    const off = await rootsWith({ acme: "off" });
    expect(off.enabled).toBe(false);
    expect(await judge(off, { spec: specBody, signature: { protected: "!!", signature: [] } })).toBeUndefined();
    // A tenant without trust roots is off while another verifies: even signatures out of bounds are not its concern.
    expect(await judge(await rootsWith(), { spec: specBody, signature: "not a JWS" }, specOf("globex"))).toBeUndefined();
    expect(await judge(await rootsWith(), { a2a_card: { ...card, signatures: Array.from({ length: 50 }, () => ({})) } }, specOf(null))).toBeUndefined();
    expect(await judge(await rootsWith(), { spec: specBody }, specOf("globex"))).toBeUndefined();
    // Shared agents have a policy of their own.
    expect(await judge(await rootsWith({ shared: "require" }), { spec: specBody }, specOf(null, "anything"))).toMatch(/shared agents requires one/);
  });
});

describe("trust roots", () => {
  it("match agent types by * patterns", () => {
    expect(matchesAgentType("acme-*", "acme-bot")).toBe(true);
    expect(matchesAgentType("acme-*", "globex-acme-bot")).toBe(false);
    expect(matchesAgentType("*-bot", "acme-bot")).toBe(true);
    expect(matchesAgentType("a*b*c", "abc")).toBe(true);
    expect(matchesAgentType("a*b*c", "acb")).toBe(false);
    expect(matchesAgentType("exact", "exact")).toBe(true);
    expect(matchesAgentType("exact", "exactly")).toBe(false);
  });

  it("refuse private keys, symmetric keys, and grants naming keys they do not hold", async () => {
    const pub = { kty: "EC", crv: "P-256", kid: "k", alg: "ES256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" };
    expect(trustDocument.safeParse({ tenants: { a: { mode: "require", jwks: { keys: [{ ...pub, d: "secret" }] }, signers: [] } } }).success).toBe(false);
    expect(trustDocument.safeParse({ tenants: { a: { mode: "require", jwks: { keys: [{ kty: "oct", k: "c2VjcmV0", kid: "h", alg: "HS256" }] } } } }).success).toBe(false);
    const orphan = trustDocument.parse({ tenants: { a: { mode: "require", jwks: { keys: [pub] }, signers: [{ kid: "other", publisher: "p", agent_types: ["*"] }] } } });
    await expect(trustRootsOf(orphan, async () => ({ keys: [] }))).rejects.toThrow(/key id other is not among the tenant's keys/);
    const nobody = trustDocument.parse({ tenants: { a: { mode: "require", jwks: { keys: [pub] } } } });
    await expect(trustRootsOf(nobody, async () => ({ keys: [] }))).rejects.toThrow(/no signers/);
  });
});
