/**
 * The operator's trust roots (docs/trust.md), as the registry reads them from the file named by
 * REGISTRY_TRUST_FILE: per tenant, a mode, the public keys it trusts (a JWK set inline or in a
 * file beside the trust file) and which key id may sign for which publisher and agent types.
 * Keys come only from here: a `jku`, `x5u`, `jwk` or `x5c` inside a signed document is never
 * fetched nor used, since whoever signs would then also choose the key that checks them.
 */
import { z } from "zod";
import { ApprovalPolicy } from "./approval-policy.js";

export const TrustMode = { Off: "off", VerifyIfPresent: "verify-if-present", Require: "require" } as const;
export type TrustMode = (typeof TrustMode)[keyof typeof TrustMode];

/** Bounds of the file: an operator's typo should fail the start, not exhaust memory. */
const MAX_KEYS = 256;
const MAX_SIGNERS = 1024;
const MAX_PATTERNS = 64;
/** A JWKS URL is fetched at most this often per replica: the key owner's server is not ours to load. */
export const MIN_JWKS_REFRESH_SECONDS = 30;

/** `*` stands for any run of agent_type characters; nothing else is special. */
const agentTypePattern = z.string().regex(/^[A-Za-z0-9_*-]{1,128}$/, "an agent_type pattern: letters, digits, _, - and *");

/** A public key as RFC 7517 writes it; `alg` is required so a signature cannot pick another algorithm for it. */
const publicJwk = z
  .object({
    kty: z.enum(["EC", "OKP", "RSA"]),
    kid: z.string().min(1).max(256),
    alg: z.enum(["ES256", "ES384", "ES512", "EdDSA", "Ed25519", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"]),
  })
  .loose()
  .refine((k) => !("d" in k || "p" in k || "q" in k), { message: "a private key: trust roots hold public keys only" });
export type PublicJwk = z.infer<typeof publicJwk>;

export const jwkSet = z.object({ keys: z.array(publicJwk).max(MAX_KEYS) });

const isoInstant = z.iso.datetime({ offset: true });

const signerGrant = z.object({
  kid: z.string().min(1).max(256),
  /** Who the key speaks for, recorded with each spec it verifies (a team, a vendor). */
  publisher: z.string().min(1).max(256),
  agent_types: z.array(agentTypePattern).min(1).max(MAX_PATTERNS),
  not_before: isoInstant.optional(),
  not_after: isoInstant.optional(),
});

export const tenantTrust = z
  .object({
    /** Absent: off, so a tenant named only for its approval policy verifies nothing. */
    mode: z.enum([TrustMode.Off, TrustMode.VerifyIfPresent, TrustMode.Require]).default(TrustMode.Off),
    /** v1.2, the approval gate (approval-policy.ts): `auto` (the default) or `manual`. */
    approval: z.enum([ApprovalPolicy.Auto, ApprovalPolicy.Manual]).default(ApprovalPolicy.Auto),
    jwks: jwkSet.optional(),
    /** Relative to the trust file's directory. */
    jwks_file: z.string().min(1).max(4096).optional(),
    /**
     * v1.2: keys fetched from an https URL the operator names (never one a signed document
     * names), refreshed every `refresh_seconds` (at least 30); see adapters/http/jwks-fetch.ts.
     */
    jwks_url: z
      .object({
        url: z.string().min(1).max(2048).startsWith("https://", "an https URL"),
        refresh_seconds: z.number().int().min(MIN_JWKS_REFRESH_SECONDS).max(86_400).default(300),
      })
      .strict()
      .optional(),
    signers: z.array(signerGrant).max(MAX_SIGNERS).default([]),
  })
  .strict();
export type TenantTrustDocument = z.infer<typeof tenantTrust>;

export const trustDocument = z
  .object({
    /** Registrations of shared agents (no tenant_scope). */
    shared: tenantTrust.optional(),
    tenants: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "a tenant id"), tenantTrust).default({}),
  })
  .strict();
export type TrustDocument = z.infer<typeof trustDocument>;

/** Whether `agentType` fits `pattern`, where `*` matches any run of characters (possibly empty). */
export function matchesAgentType(pattern: string, agentType: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === agentType;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!agentType.startsWith(first) || agentType.length < first.length + last.length) return false;
  let at = first.length;
  for (const middle of parts.slice(1, -1)) {
    const found = agentType.indexOf(middle, at);
    if (found < 0) return false;
    at = found + middle.length;
  }
  return agentType.length - last.length >= at && agentType.endsWith(last);
}
