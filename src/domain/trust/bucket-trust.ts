/**
 * Trust roots an operator stores in the registry's bucket (docs/trust.md, "Trust roots in the
 * bucket"): one reserved key per tenant, `_registry.trust.<tenant>`, holding the same entry the
 * trust file gives a tenant, written through the operator's `registry.trust.set.<tenant>`. The
 * second token `trust` is taken by no other reserved key (`evictor`, `graph`, `subjects.*`),
 * and agent, instance and schema keys never start with `_`, so the layouts cannot meet.
 *
 * An entry from the bucket holds inline keys only: a `jwks_file` written over NATS would make
 * every replica read a path of its own disk chosen by whoever may publish the op, and a
 * `jwks_url` would make every replica fetch a URL chosen the same way, on a timer; both stay
 * the trust file's, which the operator controls on disk.
 */
import { RESERVED_KEY_PREFIX } from "../model/records.js";
import { isObject } from "../model/shape.js";
import { tenantTrust, type TenantTrustDocument } from "./trust-document.js";
import type { StoreEntry } from "../ports.js";

export const TRUST_ROOTS_KEY_PREFIX = `${RESERVED_KEY_PREFIX}trust.`;
/** The encoded record's bound: a JWK set of a few dozen RSA keys fits, a flood does not. */
export const MAX_BUCKET_TRUST_BYTES = 64 * 1024;

export const trustRootsKey = (tenant: string): string => `${TRUST_ROOTS_KEY_PREFIX}${tenant}`;
export const isTrustRootsKey = (key: string): boolean => key.startsWith(TRUST_ROOTS_KEY_PREFIX);
/** The tenant of a trust roots key; undefined for any other key. */
export function tenantOfTrustRootsKey(key: string): string | undefined {
  if (!isTrustRootsKey(key)) return undefined;
  const tenant = key.slice(TRUST_ROOTS_KEY_PREFIX.length);
  return /^[A-Za-z0-9_-]{1,128}$/.test(tenant) ? tenant : undefined;
}

const FROM_FILE_ONLY = {
  jwks_file: "a file path is never taken from the bucket (it would read the server's disk): give the keys inline in jwks, or name the file in the trust file",
  jwks_url: "a JWKS URL is never taken from the bucket (every replica would fetch it): give the keys inline in jwks, or name the URL in the trust file",
} as const;

/** A tenant's entry as the bucket takes it: the trust file's, without what reads files or URLs. */
export const bucketTenantTrust = tenantTrust.superRefine((t, ctx) => {
  for (const field of ["jwks_file", "jwks_url"] as const) {
    if (t[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: FROM_FILE_ONLY[field] });
  }
});

/** What `_registry.trust.<tenant>` holds. `by` is the operator's word, as for approvals; `at` epoch ms. */
export type BucketTrustRecord = {
  readonly kind: "trust_roots";
  readonly tenant: string;
  readonly trust: TenantTrustDocument;
  readonly by: string | null;
  readonly at: number;
};

/** A stored entry as a replica holds it: the record and the revision it was written at. */
export type StoredBucketTrust = { readonly record: BucketTrustRecord; readonly revision: number };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeBucketTrust = (record: BucketTrustRecord): Uint8Array => encoder.encode(JSON.stringify(record));

/** The record of a trust roots key, or what is wrong with it: it is read as untrusted input, like every record. */
export function readBucketTrust(entry: Pick<StoreEntry, "key" | "value">): BucketTrustRecord | string {
  const tenant = tenantOfTrustRootsKey(entry.key);
  if (tenant === undefined) return "key: not _registry.trust.<tenant>";
  if (entry.value.length > MAX_BUCKET_TRUST_BYTES) return `over ${MAX_BUCKET_TRUST_BYTES} bytes`;
  let v: unknown;
  try {
    v = JSON.parse(decoder.decode(entry.value));
  } catch {
    return "not JSON";
  }
  if (!isObject(v) || v["kind"] !== "trust_roots" || v["tenant"] !== tenant) return "kind: not the trust roots of its key's tenant";
  const trust = bucketTenantTrust.safeParse(v["trust"]);
  if (!trust.success) return `trust: ${trust.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`;
  const by = typeof v["by"] === "string" ? v["by"] : null;
  return { kind: "trust_roots", tenant, trust: trust.data, by, at: typeof v["at"] === "number" ? v["at"] : 0 };
}
