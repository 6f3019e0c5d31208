/**
 * A stored spec's standing against its tenant's trust roots as they are now (docs/trust.md,
 * "When trust roots change"). Registration judges a spec once; when the roots change (a key
 * revoked or rotated, a grant narrowed, a tenant's mode changed) or a grant's validity ends,
 * every stored spec is judged again from what its record kept:
 *
 * - `verified`: its kept signatures verify (or, for a spec stored before signatures were
 *   kept, its key id is still held and a grant still lets it sign for the type);
 * - `unverified`: they do not, or there are none; the spec stays stored and routable, and
 *   `verified_only` queries leave it out;
 * - `withheld`: not verified under `require`: not routed at all, as if it had been refused,
 *   since a tenant that requires signatures must never route what no trusted key vouches for.
 *
 * A spec that was never verified and is not withheld carries no lapse: it is plainly unverified.
 */
import { decodeProtectedHeader } from "jose";
import type { TrustStateName } from "../../protocol/events.js";
import type { AgentSpec } from "../spec/spec.js";
import { TrustMode } from "./trust-document.js";
import { refusalReason } from "./trust-refusal.js";
import type { TenantTrust } from "./trust-roots.js";
import { documentOf, type SignedEvidence } from "./signed-evidence.js";
import { currentGrant, verifySignatures, type Attestation } from "./verify-signatures.js";
import type { TrustLapse } from "./trust-lapse.js";

/** What of a spec record its standing reads and writes. */
export type TrustFields = {
  readonly spec: AgentSpec;
  readonly static?: boolean | undefined;
  readonly trust?: Attestation | undefined;
  readonly trust_lapse?: TrustLapse | undefined;
  readonly signed?: SignedEvidence | undefined;
};

export type TrustStanding = { readonly trust?: Attestation; readonly trust_lapse?: TrustLapse };

export function trustStateOf(r: { readonly trust?: Attestation | undefined; readonly trust_lapse?: TrustLapse | undefined }): TrustStateName {
  return r.trust !== undefined ? "verified" : (r.trust_lapse?.state ?? "unverified");
}

/** Whether two standings are the same (the times aside), so a re-judgement writes nothing. */
export function sameStanding(a: { readonly trust?: Attestation | undefined; readonly trust_lapse?: TrustLapse | undefined }, b: TrustStanding): boolean {
  const ta = a.trust;
  const tb = b.trust;
  if ((ta === undefined) !== (tb === undefined) || (ta && tb && (ta.kid !== tb.kid || ta.publisher !== tb.publisher))) return false;
  const la = a.trust_lapse;
  const lb = b.trust_lapse;
  if (la === undefined || lb === undefined) return la === lb;
  return la.state === lb.state && la.reason === lb.reason && la.kid === lb.kid;
}

/**
 * The standing of a stored spec under `trust` (undefined: its tenant's mode is off) at `now`.
 * Registry-file entries are the operator's own and keep theirs.
 */
export async function judgeStored(r: TrustFields, trust: TenantTrust | undefined, now: number): Promise<TrustStanding> {
  const was: TrustStanding = standingOf(r);
  if (r.static === true) return was;
  const outcome = trust === undefined ? { reason: "mode_off", kid: keyIdOf(r) } : await verifyKept(r, trust, now);
  if ("verified" in outcome) {
    // The same key and publisher: the attestation it had stays, with its time.
    const kept = r.trust !== undefined && r.trust.kid === outcome.kid && r.trust.publisher === outcome.publisher ? r.trust : outcome;
    return { trust: kept };
  }
  const state = trust?.mode === TrustMode.Require ? "withheld" : "unverified";
  // A spec never verified and not withheld is plainly unverified: no lapse to tell.
  if (state === "unverified" && r.trust === undefined && r.trust_lapse === undefined) return {};
  const lapse: TrustLapse = { state, reason: outcome.reason, kid: outcome.kid, at: now };
  const held = r.trust_lapse;
  return { trust_lapse: held !== undefined && sameStanding({ trust_lapse: held }, { trust_lapse: lapse }) ? held : lapse };
}

function standingOf(r: TrustFields): TrustStanding {
  return { ...(r.trust ? { trust: r.trust } : {}), ...(r.trust_lapse ? { trust_lapse: r.trust_lapse } : {}) };
}

async function verifyKept(r: TrustFields, trust: TenantTrust, now: number): Promise<Attestation | { reason: string; kid: string | null }> {
  const agentType = r.spec.agent_type;
  try {
    if (r.signed !== undefined) return await verifySignatures(documentOf(r.signed), trust, agentType, now);
    if (r.trust !== undefined) {
      // Stored before signatures were kept: the key id must still be held, with a grant for the type.
      const key = trust.keys.get(r.trust.kid);
      if (key === undefined) return { reason: "unknown_key", kid: r.trust.kid };
      const grant = currentGrant(trust, r.trust.kid, agentType, now, "signature");
      return { verified: true, kid: grant.kid, publisher: grant.publisher, verified_at: now };
    }
  } catch (e) {
    return { reason: refusalReason(e) ?? "bad_signature", kid: keyIdOf(r) };
  }
  return { reason: trust.mode === TrustMode.Require ? "signature_required" : "unsigned", kid: null };
}

/** The key id a spec was verified with, or its first kept signature names. */
function keyIdOf(r: TrustFields): string | null {
  if (r.trust !== undefined) return r.trust.kid;
  const first = r.signed?.signatures[0];
  if (first !== undefined) {
    try {
      const kid = decodeProtectedHeader({ protected: first.protected }).kid;
      if (typeof kid === "string") return kid;
    } catch {
      // A kept signature whose header does not decode names no key.
    }
  }
  return r.trust_lapse?.kid ?? null;
}
