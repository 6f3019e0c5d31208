/**
 * The trust roots in force: per tenant (and for shared agents), the mode, the imported public
 * keys by key id, and the grants saying which key id may sign for which agent types and on
 * whose behalf. Built once from the operator's document (trust-document.ts); keys are imported
 * with jose, never parsed by hand.
 */
import { importJWK } from "jose";
import { ApprovalPolicy } from "./approval-policy.js";
import { jwkSet, TrustMode, type PublicJwk, type TenantTrustDocument, type TrustDocument } from "./trust-document.js";

/** A key as jose imports it (a WebCrypto key). */
type ImportedKey = Awaited<ReturnType<typeof importJWK>>;

export type TrustedKey = { readonly kid: string; readonly alg: string; readonly key: ImportedKey };

export type SignerGrant = {
  readonly kid: string;
  readonly publisher: string;
  readonly agentTypes: readonly string[];
  /** Epoch ms; absent: no bound. */
  readonly notBefore?: number;
  readonly notAfter?: number;
};

export type TenantTrust = { readonly mode: TrustMode; readonly approval: ApprovalPolicy; readonly keys: ReadonlyMap<string, TrustedKey>; readonly signers: readonly SignerGrant[] };

/** Where `jwks_file` is read from: the file adapter resolves it beside the trust file. */
export type JwksReader = (path: string) => Promise<unknown>;

export class TrustRoots {
  /** No trust file: every tenant is `off`, the registry behaves as v1.1. */
  static readonly none = new TrustRoots(new Map(), undefined);

  constructor(
    private readonly tenants: ReadonlyMap<string, TenantTrust>,
    private readonly shared: TenantTrust | undefined,
  ) {}

  /** The trust of a tenant's registrations (null: shared agents); undefined: mode off. */
  forTenant(tenant: string | null): TenantTrust | undefined {
    const trust = tenant === null ? this.shared : this.tenants.get(tenant);
    return trust?.mode === TrustMode.Off ? undefined : trust;
  }

  /** The approval policy of a tenant's registrations (null: shared agents); auto unless the file says manual. */
  approvalFor(tenant: string | null): ApprovalPolicy {
    const trust = tenant === null ? this.shared : this.tenants.get(tenant);
    return trust?.approval ?? ApprovalPolicy.Auto;
  }

  /** Every tenant's trust, and the shared agents' (to find the next grant boundary). */
  all(): TenantTrust[] {
    return [...this.tenants.values(), ...(this.shared ? [this.shared] : [])];
  }

  /** Whether any tenant verifies at all: if none, registration skips every trust step. */
  get enabled(): boolean {
    if (this.shared !== undefined && this.shared.mode !== TrustMode.Off) return true;
    for (const t of this.tenants.values()) if (t.mode !== TrustMode.Off) return true;
    return false;
  }
}

/** Imports every key the document names. Throws an Error naming the tenant and what is wrong. */
export async function trustRootsOf(doc: TrustDocument, readJwks: JwksReader): Promise<TrustRoots> {
  const tenants = new Map<string, TenantTrust>();
  for (const [tenant, t] of Object.entries(doc.tenants)) tenants.set(tenant, await tenantTrustOf(t, `tenants.${tenant}`, readJwks));
  const shared = doc.shared === undefined ? undefined : await tenantTrustOf(doc.shared, "shared", readJwks);
  return new TrustRoots(tenants, shared);
}

async function tenantTrustOf(t: TenantTrustDocument, where: string, readJwks: JwksReader): Promise<TenantTrust> {
  const jwks: PublicJwk[] = [...(t.jwks?.keys ?? [])];
  if (t.jwks_file !== undefined) {
    const parsed = jwkSet.safeParse(await readJwks(t.jwks_file));
    if (!parsed.success) throw new Error(`${where}.jwks_file ${t.jwks_file}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    jwks.push(...parsed.data.keys);
  }
  const keys = new Map<string, TrustedKey>();
  for (const jwk of jwks) {
    if (keys.has(jwk.kid)) throw new Error(`${where}: key id ${jwk.kid} is listed twice`);
    let key: ImportedKey;
    try {
      key = await importJWK(jwk, jwk.alg);
    } catch (e) {
      throw new Error(`${where}: key ${jwk.kid} cannot be imported as ${jwk.alg}: ${(e as Error).message}`);
    }
    keys.set(jwk.kid, { kid: jwk.kid, alg: jwk.alg, key });
  }
  const signers = t.signers.map((s): SignerGrant => {
    if (!keys.has(s.kid)) throw new Error(`${where}.signers: key id ${s.kid} is not among the tenant's keys`);
    return {
      kid: s.kid,
      publisher: s.publisher,
      agentTypes: s.agent_types,
      ...(s.not_before !== undefined ? { notBefore: Date.parse(s.not_before) } : {}),
      ...(s.not_after !== undefined ? { notAfter: Date.parse(s.not_after) } : {}),
    };
  });
  if (t.mode !== TrustMode.Off && signers.length === 0) throw new Error(`${where}: mode ${t.mode} with no signers would refuse every signature`);
  return { mode: t.mode, approval: t.approval, keys, signers };
}
