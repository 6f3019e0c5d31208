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

export type TenantTrust = {
  readonly mode: TrustMode;
  readonly approval: ApprovalPolicy;
  readonly keys: ReadonlyMap<string, TrustedKey>;
  readonly signers: readonly SignerGrant[];
  /** v1.2: how often its `jwks_url` is fetched again; absent: it names none. */
  readonly refreshMs?: number;
};

/** Where `jwks_file` is read from: the file adapter resolves it beside the trust file. */
export type JwksReader = (path: string) => Promise<unknown>;
/** Where `jwks_url` is fetched from (adapters/http/jwks-url-cache.ts); absent: a document naming one is refused. */
export type JwksFetcher = (url: string) => Promise<unknown>;

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

  /** The shortest refresh interval of any tenant's JWKS URL; undefined: no tenant names one. */
  get jwksRefreshMs(): number | undefined {
    const intervals = this.all().flatMap((t) => (t.refreshMs === undefined ? [] : [t.refreshMs]));
    return intervals.length === 0 ? undefined : Math.min(...intervals);
  }

  /** Whether the document these roots were read from names the tenant (the trust file's floor, docs/trust.md). */
  names(tenant: string): boolean {
    return this.tenants.has(tenant);
  }

  /**
   * These roots (the trust file's) with the tenants the bucket holds (bucket-trust.ts) added: a
   * tenant the file names keeps the file's entry whatever the bucket holds for it, so what the
   * operator wrote on disk is a floor that no request over NATS can lower.
   */
  withBucket(bucket: ReadonlyMap<string, TenantTrust>): TrustRoots {
    if (bucket.size === 0) return this;
    const tenants = new Map(bucket);
    for (const [tenant, trust] of this.tenants) tenants.set(tenant, trust);
    return new TrustRoots(tenants, this.shared);
  }

  /** Whether any tenant verifies at all: if none, registration skips every trust step. */
  get enabled(): boolean {
    if (this.shared !== undefined && this.shared.mode !== TrustMode.Off) return true;
    for (const t of this.tenants.values()) if (t.mode !== TrustMode.Off) return true;
    return false;
  }
}

/** Imports every key the document names. Throws an Error naming the tenant and what is wrong. */
export async function trustRootsOf(doc: TrustDocument, readJwks: JwksReader, fetchJwks?: JwksFetcher): Promise<TrustRoots> {
  const tenants = new Map<string, TenantTrust>();
  for (const [tenant, t] of Object.entries(doc.tenants)) tenants.set(tenant, await tenantTrustOf(t, `tenants.${tenant}`, readJwks, fetchJwks));
  const shared = doc.shared === undefined ? undefined : await tenantTrustOf(doc.shared, "shared", readJwks, fetchJwks);
  return new TrustRoots(tenants, shared);
}

/** A tenant's entry from the bucket (bucket-trust.ts: inline keys only). Throws an Error naming what is wrong. */
export function bucketTenantTrustOf(t: TenantTrustDocument, where: string): Promise<TenantTrust> {
  return tenantTrustOf(t, where, () => Promise.reject(new Error(`${where}: keys are inline only`)));
}

async function tenantTrustOf(t: TenantTrustDocument, where: string, readJwks: JwksReader, fetchJwks?: JwksFetcher): Promise<TenantTrust> {
  const jwks: PublicJwk[] = [...(t.jwks?.keys ?? [])];
  if (t.jwks_file !== undefined) jwks.push(...keysOf(await readJwks(t.jwks_file), `${where}.jwks_file ${t.jwks_file}`));
  if (t.jwks_url !== undefined) {
    if (fetchJwks === undefined) throw new Error(`${where}.jwks_url: this reader fetches no URL`);
    jwks.push(...keysOf(await fetchJwks(t.jwks_url.url), `${where}.jwks_url ${t.jwks_url.url}`));
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
  return { mode: t.mode, approval: t.approval, keys, signers, ...(t.jwks_url ? { refreshMs: t.jwks_url.refresh_seconds * 1000 } : {}) };
}

/** The public keys of a JWK set read from a file or a URL, held to the same rules as inline ones. */
function keysOf(value: unknown, where: string): PublicJwk[] {
  const parsed = jwkSet.safeParse(value);
  if (!parsed.success) throw new Error(`${where}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data.keys;
}
