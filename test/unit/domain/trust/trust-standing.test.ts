/**
 * A stored spec judged again against trust roots as they are now (trust-standing.ts): its kept
 * signature is verified as at registration; a key revoked, a grant narrowed or past not_after,
 * a tenant now off or requiring signatures each give the standing docs/trust.md's table says.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import type { AgentSpec } from "../../../../src/domain/spec/spec.js";
import { trustDocument } from "../../../../src/domain/trust/trust-document.js";
import { trustRootsOf, type TenantTrust } from "../../../../src/domain/trust/trust-roots.js";
import { judgeStored, sameStanding, trustStateOf, type TrustFields } from "../../../../src/domain/trust/trust-standing.js";
import type { SignedEvidence } from "../../../../src/domain/trust/signed-evidence.js";
import { trustChangedEvent } from "../../../../src/domain/view/trust-events.js";
import { nextGrantBoundary } from "../../../../src/service/registration/trust-rejudge.js";
import { isApprovedView } from "../../../../src/discovery/approved-view.js";
import type { AgentView } from "../../../../src/protocol/messages.js";

const NOW = Date.parse("2026-06-01T00:00:00Z");
const spec = { agent_type: "acme-a", version: "1.0.0", tenant_scope: "acme" } as unknown as AgentSpec;
const key = generateKeyPairSync("ed25519");
const jwk = { ...key.publicKey.export({ format: "jwk" }), kid: "k1", alg: "EdDSA" };
const payload = canonicalize({ agent_type: "acme-a", version: "1.0.0" })!;
const prot = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "k1" })).toString("base64url");
const signed: SignedEvidence = {
  source: "spec",
  payload,
  signatures: [{ protected: prot, signature: sign(null, Buffer.from(`${prot}.${Buffer.from(payload).toString("base64url")}`), key.privateKey).toString("base64url") }],
};
const attestation = { verified: true as const, kid: "k1", publisher: "Acme", verified_at: 1 };
const verifiedRecord: TrustFields = { spec, trust: attestation, signed };

async function acme(t: Record<string, unknown>): Promise<TenantTrust | undefined> {
  const roots = await trustRootsOf(trustDocument.parse({ tenants: { acme: t } }), async () => ({ keys: [] }));
  return roots.forTenant("acme");
}
const grant = (extra: Record<string, unknown> = {}) => ({ kid: "k1", publisher: "Acme", agent_types: ["acme-*"], ...extra });

describe("judging a stored spec again", () => {
  it("keeps a spec whose kept signature still verifies as it was, time included", async () => {
    const standing = await judgeStored(verifiedRecord, await acme({ mode: "require", jwks: { keys: [jwk] }, signers: [grant()] }), NOW);
    expect(standing).toEqual({ trust: attestation });
    expect(sameStanding(verifiedRecord, standing)).toBe(true);
  });

  it("withholds under require, and only unverifies under verify-if-present, a spec whose key is gone", async () => {
    const other = { ...jwk, kid: "k2" };
    const withheld = await judgeStored(verifiedRecord, await acme({ mode: "require", jwks: { keys: [other] }, signers: [grant({ kid: "k2" })] }), NOW);
    expect(withheld).toEqual({ trust_lapse: { state: "withheld", reason: "unknown_key", kid: "k1", at: NOW } });
    const lapsed = await judgeStored(verifiedRecord, await acme({ mode: "verify-if-present", jwks: { keys: [other] }, signers: [grant({ kid: "k2" })] }), NOW);
    expect(trustStateOf(lapsed)).toBe("unverified");
    expect(lapsed.trust_lapse?.reason).toBe("unknown_key");
  });

  it("tells a grant narrowed, one past not_after, a key replaced under its kid, and a tenant turned off", async () => {
    const keys = { keys: [jwk] };
    expect((await judgeStored(verifiedRecord, await acme({ mode: "require", jwks: keys, signers: [grant({ agent_types: ["acme-b*"] })] }), NOW)).trust_lapse?.reason).toBe("not_authorized");
    expect((await judgeStored(verifiedRecord, await acme({ mode: "require", jwks: keys, signers: [grant({ not_after: "2026-01-01T00:00:00Z" })] }), NOW)).trust_lapse?.reason).toBe("key_expired");
    const replaced = { ...generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }), kid: "k1", alg: "EdDSA" };
    expect((await judgeStored(verifiedRecord, await acme({ mode: "require", jwks: { keys: [replaced] }, signers: [grant()] }), NOW)).trust_lapse?.reason).toBe("bad_signature");
    expect(await judgeStored(verifiedRecord, undefined, NOW)).toEqual({ trust_lapse: { state: "unverified", reason: "mode_off", kid: "k1", at: NOW } });
  });

  it("verifies again a lapsed spec whose key is back, and withholds an unsigned one once its tenant requires signatures", async () => {
    const lapsed: TrustFields = { spec, signed, trust_lapse: { state: "withheld", reason: "unknown_key", kid: "k1", at: 5 } };
    const back = await judgeStored(lapsed, await acme({ mode: "require", jwks: { keys: [jwk] }, signers: [grant()] }), NOW);
    expect(back).toEqual({ trust: { verified: true, kid: "k1", publisher: "Acme", verified_at: NOW } });
    const unsigned: TrustFields = { spec };
    expect((await judgeStored(unsigned, await acme({ mode: "require", jwks: { keys: [jwk] }, signers: [grant()] }), NOW)).trust_lapse).toMatchObject({ state: "withheld", reason: "signature_required", kid: null });
    expect(await judgeStored(unsigned, await acme({ mode: "verify-if-present", jwks: { keys: [jwk] }, signers: [grant()] }), NOW)).toEqual({});
  });

  it("judges a spec stored before signatures were kept by its key id and grant, and leaves registry-file entries alone", async () => {
    const legacy: TrustFields = { spec, trust: attestation };
    expect(await judgeStored(legacy, await acme({ mode: "require", jwks: { keys: [jwk] }, signers: [grant()] }), NOW)).toEqual({ trust: attestation });
    expect((await judgeStored(legacy, await acme({ mode: "require", jwks: { keys: [{ ...jwk, kid: "k2" }] }, signers: [grant({ kid: "k2" })] }), NOW)).trust_lapse?.reason).toBe("unknown_key");
    expect(await judgeStored({ spec, static: true }, await acme({ mode: "require", jwks: { keys: [jwk] }, signers: [grant()] }), NOW)).toEqual({});
  });

  it("derives one trust_changed event from a standing change of the same spec, none from a new spec", () => {
    const lapse = { state: "withheld" as const, reason: "unknown_key", kid: "k1", at: NOW };
    expect(trustChangedEvent("acme-a", spec, { spec, trust: attestation }, { trust_lapse: lapse }, 9)).toEqual({
      type: "registry.agent.trust_changed",
      subject: "acme-a",
      data: { agent_type: "acme-a", version: "1.0.0", tenant_scope: "acme", previous_state: "verified", state: "withheld", kid: "k1", publisher: "Acme", reason: "unknown_key", revision: 9 },
    });
    expect(trustChangedEvent("acme-a", spec, { spec, trust: attestation }, { trust: { ...attestation, verified_at: 7 } }, 9)).toBeUndefined();
    const newer = { ...spec, version: "2.0.0" } as unknown as AgentSpec;
    expect(trustChangedEvent("acme-a", newer, { spec, trust: attestation }, { trust_lapse: lapse }, 9)).toBeUndefined();
  });

  it("finds the next grant boundary, not_after inclusive", async () => {
    const roots = await trustRootsOf(
      trustDocument.parse({ tenants: { acme: { mode: "require", jwks: { keys: [jwk] }, signers: [grant({ not_before: "2026-07-01T00:00:00Z", not_after: "2026-06-02T00:00:00Z" })] } } }),
      async () => ({ keys: [] }),
    );
    expect(nextGrantBoundary(roots, NOW)).toBe(Date.parse("2026-06-02T00:00:00Z") + 1);
    expect(nextGrantBoundary(roots, Date.parse("2026-08-01T00:00:00Z"))).toBeUndefined();
  });

  it("leaves a withheld spec out of the discovery front's catalog, and keeps one merely unverified", () => {
    const view = (trust: AgentView["trust"]) => ({ trust }) as AgentView;
    expect(isApprovedView(view({ verified: false, lapse: { state: "withheld", reason: "unknown_key", kid: "k1", at: "" } }))).toBe(false);
    expect(isApprovedView(view({ verified: false, lapse: { state: "unverified", reason: "unknown_key", kid: "k1", at: "" } }))).toBe(true);
    expect(isApprovedView(view({ verified: false }))).toBe(true);
  });
});
