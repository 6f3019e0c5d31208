/**
 * Checks the signatures a register body presents against a tenant's trust roots. Every
 * signature must verify: its key is chosen by the `kid` of its protected header among the
 * tenant's keys only (a `jku`, `x5u`, `jwk` or `x5c` header is never used), its algorithm must
 * be the one the key was configured with (so `none` and algorithm swaps fail), a grant must
 * let that key sign for the agent type at this time, and jose must verify the JWS over the
 * canonical document (payload detached, base64url-encoded as RFC 7515 appendix F does).
 */
import { base64url, decodeProtectedHeader, flattenedVerify } from "jose";
import { matchesAgentType } from "./trust-document.js";
import type { PresentedSignature, SignedDocument } from "./presented-signatures.js";
import type { SignerGrant, TenantTrust } from "./trust-roots.js";
import { trustRefusal } from "./trust-refusal.js";

/** What a stored spec records of its verification (docs/protocol.md section 8, v1.2). */
export type Attestation = {
  readonly verified: true;
  readonly kid: string;
  readonly publisher: string;
  /** Epoch ms of the registration that verified it. */
  readonly verified_at: number;
};

/** The attestation of the document's first signature once all verify; throws the first refusal. */
export async function verifySignatures(doc: SignedDocument, trust: TenantTrust, agentType: string, now: number): Promise<Attestation> {
  const payload = base64url.encode(doc.canonical(agentType));
  let first: Attestation | undefined;
  for (const sig of doc.signatures) {
    const grant = await verifyOne(sig, payload, trust, agentType, now);
    first ??= { verified: true, kid: grant.kid, publisher: grant.publisher, verified_at: now };
  }
  if (first === undefined) throw trustRefusal("signature_required", doc.source === "a2a_card" ? "a2a_card.signatures" : "signature", "no signature to verify");
  return first;
}

async function verifyOne(sig: PresentedSignature, payload: string, trust: TenantTrust, agentType: string, now: number): Promise<SignerGrant> {
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader({ protected: sig.protected });
  } catch {
    throw trustRefusal("malformed_signature", `${sig.path}.protected`, "not a base64url-encoded JSON object");
  }
  const { alg, kid } = header;
  if (typeof kid !== "string" || kid.length === 0) {
    throw trustRefusal("missing_kid", `${sig.path}.protected`, "the protected header names no kid; keys are chosen by kid among the tenant's trust roots only");
  }
  const key = trust.keys.get(kid);
  if (key === undefined) {
    throw trustRefusal("unknown_key", `${sig.path}.protected`, `key ${JSON.stringify(kid)} is not among the tenant's trust roots (jku, x5u, jwk and x5c are never used)`);
  }
  if (alg !== key.alg) throw trustRefusal("alg_not_allowed", `${sig.path}.protected`, `alg ${JSON.stringify(alg)}; key ${kid} verifies ${key.alg} only`);
  if (header["b64"] === false) throw trustRefusal("malformed_signature", `${sig.path}.protected`, "an unencoded payload (b64 false) is not accepted");
  const current = currentGrant(trust, kid, agentType, now, `${sig.path}.protected`);
  try {
    await flattenedVerify({ protected: sig.protected, payload, signature: sig.signature, ...(sig.header ? { header: sig.header } : {}) }, key.key, { algorithms: [key.alg] });
  } catch {
    throw trustRefusal("bad_signature", `${sig.path}.signature`, `the signature does not verify with key ${kid} over the JCS canonical form of the signed document`);
  }
  return current;
}

/** The grant that lets key `kid` sign for `agentType` at `now`; throws the refusal saying why none does. */
export function currentGrant(trust: TenantTrust, kid: string, agentType: string, now: number, path: string): SignerGrant {
  const grants = trust.signers.filter((g) => g.kid === kid && g.agentTypes.some((p) => matchesAgentType(p, agentType)));
  if (grants.length === 0) throw trustRefusal("not_authorized", path, `key ${kid} may not sign for agent type ${agentType}`);
  const current = grants.find((g) => (g.notBefore === undefined || now >= g.notBefore) && (g.notAfter === undefined || now <= g.notAfter));
  if (current === undefined) {
    const expired = grants.some((g) => g.notAfter !== undefined && now > g.notAfter);
    throw trustRefusal(expired ? "key_expired" : "key_not_yet_valid", path, `key ${kid} is ${expired ? "past its not_after" : "before its not_before"}`);
  }
  return current;
}
