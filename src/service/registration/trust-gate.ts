/**
 * The trust step of registration (docs/trust.md): what a register body presents is bounded
 * before anything costly runs, then, once the spec is validated and its tenant known, judged
 * by the tenant's mode. `off` (the default, and every tenant without trust roots) ignores
 * signatures entirely, as v1.1 did; `verify-if-present` refuses an invalid signature and lets
 * an unsigned spec through unverified; `require` refuses an unsigned one too. A refusal is an
 * `invalid_request` naming the reason (trust-refusal.ts), thrown before anything is written.
 */
import { RegistryError } from "../../domain/errors.js";
import type { AgentSpec } from "../../domain/spec/spec.js";
import { presentedSignatures, type SignedDocument } from "../../domain/trust/presented-signatures.js";
import { TrustMode } from "../../domain/trust/trust-document.js";
import type { ApprovalPolicy } from "../../domain/trust/approval-policy.js";
import { trustRefusal } from "../../domain/trust/trust-refusal.js";
import type { TenantTrust, TrustRoots } from "../../domain/trust/trust-roots.js";
import { verifySignatures, type Attestation } from "../../domain/trust/verify-signatures.js";
import { evidenceOf, type SignedEvidence } from "../../domain/trust/signed-evidence.js";

/** Fields beside a card that decide where its requests go or who owns it, and that its signature does not cover. */
const UNSIGNED_CARD_FIELDS = ["nats_subject", "consumer_group", "owner_team"] as const;

/**
 * What the gate saw of a body before validation: null when trust is off everywhere; else the
 * signed document, or the refusal of signatures out of bounds, kept for the judgement when
 * the tenant they were meant for could not be told yet (a tenant whose mode is off never sees it).
 */
export type Presented = { readonly document: SignedDocument | null } | { readonly refused: RegistryError } | null;

/** What registration stores of its judgement: the attestation, and the signatures it verified (kept to verify again). */
export type Judgement = { readonly trust: Attestation; readonly signed: SignedEvidence } | undefined;

export class TrustGate {
  private current: TrustRoots;
  private bucket: ReadonlyMap<string, TenantTrust> = new Map();

  constructor(private file: TrustRoots) {
    this.current = file;
  }

  /** The trust roots in force: the trust file's last good ones, with the bucket's tenants the file does not name. */
  get roots(): TrustRoots {
    return this.current;
  }

  /** The trust file's roots alone (the floor: a tenant they name is not taken from the bucket). */
  get fileRoots(): TrustRoots {
    return this.file;
  }

  /** v1.2: new trust roots, read again after the trust file changed; registrations from now on are judged by them. */
  replace(roots: TrustRoots): void {
    this.file = roots;
    this.current = roots.withBucket(this.bucket);
  }

  /** v1.2: the tenants' trust roots the bucket holds now (start/trust-bucket.ts), merged under the file's. */
  replaceBucket(bucket: ReadonlyMap<string, TenantTrust>): void {
    this.bucket = bucket;
    this.current = this.file.withBucket(bucket);
  }

  /** v1.2: the approval policy a registration of this tenant (null: shared) is stored under (approval-policy.ts). */
  approvalPolicy(tenant: string | null): ApprovalPolicy {
    return this.current.approvalFor(tenant);
  }

  /**
   * Cheap bounds on the body's signatures, run before the spec is imported or validated.
   * Signatures out of bounds are refused at once when the tenant they are meant for (the
   * subject's, else the one the body names) verifies, so a huge array costs nothing more;
   * otherwise the refusal waits for the judgement, which drops it if the spec's tenant is off.
   */
  presented(body: Readonly<Record<string, unknown>>, subjectTenant?: string | null): Presented {
    if (!this.current.enabled) return null;
    try {
      return { document: presentedSignatures(body) };
    } catch (e) {
      const tenant = typeof subjectTenant === "string" ? subjectTenant : namedTenant(body);
      if (!(e instanceof RegistryError) || this.current.forTenant(tenant) !== undefined) throw e;
      return { refused: e };
    }
  }

  /**
   * The attestation to store with the spec, or undefined for an unverified one. `body` is the
   * body as sent (before its tenant was bound into it): the signature covers what the signer sent.
   */
  async judge(presented: Presented, body: Readonly<Record<string, unknown>>, spec: AgentSpec, now: number): Promise<Judgement> {
    if (presented === null) return undefined;
    const trust = this.current.forTenant(spec.tenant_scope ?? null);
    if (trust === undefined) return undefined;
    if ("refused" in presented) throw presented.refused;
    const doc = presented.document;
    if (doc === null || doc.signatures.length === 0) {
      if (trust.mode !== TrustMode.Require) return undefined;
      const path = doc?.source === "a2a_card" ? "a2a_card.signatures" : "signature";
      const what = "the registration carries no signature";
      throw trustRefusal("signature_required", path, `${what}, and ${spec.tenant_scope === null ? "shared agents" : `tenant ${spec.tenant_scope}`} requires one`);
    }
    if (doc.source === "a2a_card") {
      const unsigned = UNSIGNED_CARD_FIELDS.find((f) => body[f] !== undefined);
      if (unsigned !== undefined) throw trustRefusal("unsigned_fields", unsigned, "the card's signatures do not cover it: put it in the card or leave it to its default");
    }
    const trusted = await verifySignatures(doc, trust, spec.agent_type, now);
    const signed = evidenceOf(doc, spec.agent_type);
    // verifySignatures refuses a document with no signature, so there is always evidence here.
    return signed === undefined ? undefined : { trust: trusted, signed };
  }
}

/** The tenant a body names (in its spec, or beside a card or a tool spec); null: none, shared. */
function namedTenant(body: Readonly<Record<string, unknown>>): string | null {
  const spec = body["spec"];
  const inSpec = typeof spec === "object" && spec !== null ? (spec as Record<string, unknown>)["tenant_scope"] : undefined;
  const named = inSpec ?? body["tenant_scope"];
  return typeof named === "string" ? named : null;
}
