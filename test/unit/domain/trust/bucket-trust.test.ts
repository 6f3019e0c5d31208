/**
 * Trust roots in the bucket, their pure rules (docs/trust.md, "Trust roots in the bucket"): the
 * key layout meets no other key, a stored record is read as untrusted input, the view's book
 * derives one event per change, and the trust file's tenants win over the bucket's.
 */
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { encodeBucketTrust, isTrustRootsKey, readBucketTrust, tenantOfTrustRootsKey, trustRootsKey, bucketTenantTrust } from "../../../../src/domain/trust/bucket-trust.js";
import { parseKey } from "../../../../src/domain/model/records.js";
import { subjectClaimKey } from "../../../../src/domain/model/subject-claims.js";
import { TrustRootsBook } from "../../../../src/domain/view/trust-roots-book.js";
import { bucketTenantTrustOf, TrustRoots } from "../../../../src/domain/trust/trust-roots.js";
import type { StoreEntry } from "../../../../src/domain/ports.js";

const { publicKey } = generateKeyPairSync("ed25519");
const jwk = { ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "EdDSA" };
const doc = bucketTenantTrust.parse({ mode: "require", jwks: { keys: [jwk] }, signers: [{ kid: "k1", publisher: "Globex", agent_types: ["globex-*"] }] });
const put = (tenant: string, revision: number, by: string | null = "alice"): StoreEntry => ({
  key: trustRootsKey(tenant),
  revision,
  operation: "PUT",
  value: encodeBucketTrust({ kind: "trust_roots", tenant, trust: doc, by, at: 1 }),
  created: 1,
});
const del = (tenant: string, revision: number): StoreEntry => ({ key: trustRootsKey(tenant), revision, operation: "DEL", value: new Uint8Array(), created: 2 });

describe("the trust roots key", () => {
  it("is a reserved key that no claim, lease or graph key can be", () => {
    expect(trustRootsKey("globex")).toBe("_registry.trust.globex");
    expect(parseKey(trustRootsKey("globex"))).toEqual({ kind: "reserved", name: "trust.globex" });
    for (const other of ["_registry.evictor", "_registry.graph", subjectClaimKey("trust.globex"), "agents.trust", "instances.trust.x"]) expect(isTrustRootsKey(other)).toBe(false);
    expect(tenantOfTrustRootsKey("_registry.trust.a.b")).toBeUndefined();
  });
});

describe("a stored record", () => {
  it("reads back as written, and anything else is a problem named", () => {
    expect(readBucketTrust(put("globex", 3))).toMatchObject({ kind: "trust_roots", tenant: "globex", by: "alice", trust: { mode: "require" } });
    const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    expect(readBucketTrust({ key: trustRootsKey("globex"), value: bytes({ kind: "trust_roots", tenant: "other", trust: doc }) })).toMatch(/its key's tenant/);
    expect(readBucketTrust({ key: trustRootsKey("globex"), value: new TextEncoder().encode("{") })).toBe("not JSON");
    const withFile = { kind: "trust_roots", tenant: "globex", trust: { ...doc, jwks_file: "/etc/passwd" } };
    expect(readBucketTrust({ key: trustRootsKey("globex"), value: bytes(withFile) })).toMatch(/^trust: jwks_file: a file path is never taken/);
  });
});

describe("TrustRootsBook", () => {
  it("derives one event per set and per delete, keeps the last good entry on damage, and tells its listener", () => {
    const book = new TrustRootsBook();
    let changes = 0;
    book.onChange = () => changes++;
    const problems: string[] = [];
    const [set] = book.apply(put("globex", 3), (p) => problems.push(p));
    expect(set).toMatchObject({ type: "registry.trust.roots_changed", subject: "globex", data: { tenant: "globex", change: "set", mode: "require", approval: "auto", kids: ["k1"], by: "alice", revision: 3 } });
    expect(book.apply({ ...put("globex", 4), value: new TextEncoder().encode("[]") }, (p) => problems.push(p))).toEqual([]);
    expect(problems).toEqual([expect.stringMatching(/^kind: not the trust roots/)]);
    expect(book.get("globex")?.revision).toBe(3);
    const [gone] = book.apply(del("globex", 5), () => undefined);
    expect(gone).toMatchObject({ data: { tenant: "globex", change: "deleted", mode: null, approval: null, kids: [], by: null, revision: 5 } });
    expect(book.apply(del("globex", 6), () => undefined)).toEqual([]);
    expect(changes).toBe(2);
  });
});

describe("merging the bucket's tenants under the file's", () => {
  it("takes a tenant the file does not name, and keeps the file's entry for one it does", async () => {
    const fromBucket = await bucketTenantTrustOf(doc, "globex");
    const file = new TrustRoots(new Map([["acme", { mode: "off", approval: "manual", keys: new Map(), signers: [] }]]), undefined);
    const merged = file.withBucket(new Map([["globex", fromBucket], ["acme", fromBucket]]));
    expect(merged.forTenant("globex")?.mode).toBe("require");
    expect(merged.forTenant("acme")).toBeUndefined();
    expect(merged.approvalFor("acme")).toBe("manual");
    expect(merged.enabled).toBe(true);
    expect(file.enabled).toBe(false);
    expect(file.withBucket(new Map())).toBe(file);
  });

  it("refuses an entry whose grant names a key it does not hold", async () => {
    await expect(bucketTenantTrustOf({ ...doc, signers: [{ kid: "nobody", publisher: "x", agent_types: ["*"] }] }, "globex")).rejects.toThrow(/key id nobody is not among the tenant's keys/);
  });
});
