/**
 * Trust roots in the bucket (docs/trust.md) on two real replicas of one bucket: the operator
 * sets tenant globex's roots with `registry.trust.set.globex`; once each replica follows them, a
 * signed registration is stored verified and an unsigned one refused. Rotating the key (a
 * compare-and-set on the entry's revision) withholds the stored spec, and deleting the roots
 * leaves it unverified: each change is judged by both replicas, and each spec's new standing is
 * one stored `registry.agent.trust_changed`, each write one `registry.trust.roots_changed`. Bad
 * bodies (a file path, a URL, a private key, a grant without its key, too large, a stale
 * revision, a tenant the trust file names) are refused with structured errors, storing nothing.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let dir: string;
let server: NatsTestServer;
let replicas: TestRegistry[] = [];
let c: RawClient;

type Key = { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> };
function newKey(kid: string): Key {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { kid, privateKey, jwk: { ...publicKey.export({ format: "jwk" }), kid, alg: "EdDSA" } };
}
const entry = (key: Key, extra: Record<string, unknown> = {}) => ({
  mode: "require",
  jwks: { keys: [key.jwk] },
  signers: [{ kid: key.kid, publisher: "Globex", agent_types: ["globex-*"] }],
  ...extra,
});
const globexSpec = spec("globex-summarizer", { tenant_scope: "globex" });
function signed(key: Key): Record<string, unknown> {
  const prot = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: key.kid })).toString("base64url");
  const input = `${prot}.${Buffer.from(canonicalize(globexSpec)!).toString("base64url")}`;
  const signature = sign(null, Buffer.from(input), createPrivateKey(key.privateKey.export({ format: "pem", type: "pkcs8" }))).toString("base64url");
  return { spec: globexSpec, signature: { protected: prot, signature }, heartbeat_interval_ms: 600_000 };
}

const stored = async (type: string) => (await readStoredEvents(c.nc, configOf(replicas[0]!).eventsStream)).filter((e) => e.event.type === type).map((e) => e.event);
const trustOf = async () => (await c.request("tenant.globex.get", { agent_type: "globex-summarizer" })).body.agent?.trust;
const judgedByBucket = (r: TestRegistry) => r.logs.filter((l) => l.msg === "stored specs judged again against the trust roots" && l["reason"] === "trust roots in the bucket changed").length;
const judgedBefore = new Map<TestRegistry, number>();
/** Every replica applied one more change of the bucket's roots and judged the stored specs by it. */
async function allFollow(what: string): Promise<void> {
  await waitFor(() => replicas.every((r) => judgedByBucket(r) > (judgedBefore.get(r) ?? 0)), { timeoutMs: 20_000, message: `a replica did not follow ${what}` });
  for (const r of replicas) judgedBefore.set(r, judgedByBucket(r));
}

const k1 = newKey("globex-1");
const k2 = newKey("globex-2");
let setRevision = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trust-bucket-"));
  // The file names acme only: globex's roots may come from the bucket, acme's may not.
  writeFileSync(join(dir, "trust.json"), JSON.stringify({ tenants: { acme: { approval: "auto" } } }));
  server = await withNatsServer();
  const first = await startRegistry(server.url, { trustFile: join(dir, "trust.json") });
  replicas = [first, await startRegistry(server.url, {}, configOf(first))];
  c = await RawClient.connect(server.url, configOf(first).prefix);
}, 60_000);

afterAll(async () => {
  await c?.close();
  for (const r of replicas) await r.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a tenant's trust roots in the bucket, on two replicas", () => {
  it("set: a signed registration is stored verified, an unsigned one refused", { timeout: 60_000 }, async () => {
    expect((await c.request("trust.get.globex")).body).toEqual({ tenant: "globex", trust: null, by: null, revision: null, in_force: "none" });
    const set = await c.request("trust.set.globex", { trust: entry(k1), by: "alice", revision: 0 });
    expect(set.ok, JSON.stringify(set.body)).toBe(true);
    expect(set.body).toMatchObject({ tenant: "globex", by: "alice", in_force: "bucket", trust: { mode: "require", approval: "auto" } });
    setRevision = set.body.revision;
    await allFollow("the set");
    const got = await c.request("trust.get.globex");
    expect(got.body).toMatchObject({ tenant: "globex", by: "alice", revision: setRevision, in_force: "bucket", trust: { jwks: { keys: [{ kid: "globex-1" }] } } });

    const unsigned = await c.request("tenant.globex.register.globex-summarizer", { spec: globexSpec });
    expect(unsigned.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "signature", message: expect.stringMatching(/^signature_required: /) }] });
    const r = await c.request("tenant.globex.register.globex-summarizer", signed(k1));
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    await waitFor(async () => (await trustOf())?.verified === true);
    expect(await trustOf()).toMatchObject({ verified: true, kid: "globex-1", publisher: "Globex" });
  });

  it("rotate: the stored spec is withheld, one trust_changed event for two replicas", { timeout: 60_000 }, async () => {
    const stale = await c.request("trust.set.globex", { trust: entry(k2), revision: setRevision + 1000 });
    expect(stale.body.error).toMatchObject({ code: "conflict", message: expect.stringMatching(/is at revision/) });
    const rotated = await c.request("trust.set.globex", { trust: entry(k2), by: "bob", revision: setRevision });
    expect(rotated.ok, JSON.stringify(rotated.body)).toBe(true);
    setRevision = rotated.body.revision;
    await allFollow("the rotation");
    await waitFor(async () => (await trustOf())?.lapse?.state === "withheld", { timeoutMs: 20_000 });
    expect(await trustOf()).toMatchObject({ verified: false, lapse: { state: "withheld", reason: "unknown_key", kid: "globex-1" } });
    // A later write's event stored means every earlier write's is (store order).
    expect((await c.request("register.marker-1", { spec: spec("marker-1") })).ok).toBe(true);
    await waitFor(async () => (await readStoredEvents(c.nc, configOf(replicas[0]!).eventsStream)).some((e) => e.event.subject === "marker-1"), { timeoutMs: 10_000 });
    expect((await stored("registry.agent.trust_changed")).map((e) => e.data)).toEqual([
      expect.objectContaining({ agent_type: "globex-summarizer", tenant_scope: "globex", previous_state: "verified", state: "withheld", kid: "globex-1", reason: "unknown_key" }),
    ]);
    // The new key verifies a registration signed with it.
    expect((await c.request("tenant.globex.register.globex-summarizer", signed(k2))).ok).toBe(true);
    await waitFor(async () => (await trustOf())?.kid === "globex-2");
  });

  it("delete: the tenant's mode is off again, the spec unverified; each write is one roots_changed event", { timeout: 60_000 }, async () => {
    const del = await c.request("trust.delete.globex", { by: "carol", revision: setRevision });
    expect(del.ok, JSON.stringify(del.body)).toBe(true);
    expect(del.body).toEqual({ tenant: "globex", trust: null, by: "carol", revision: null, in_force: "none" });
    await allFollow("the delete");
    await waitFor(async () => (await trustOf())?.verified === false, { timeoutMs: 20_000 });
    expect((await c.request("trust.delete.globex", {})).body.error.code).toBe("not_found");
    expect((await c.request("register.marker-2", { spec: spec("marker-2") })).ok).toBe(true);
    await waitFor(async () => (await readStoredEvents(c.nc, configOf(replicas[0]!).eventsStream)).some((e) => e.event.subject === "marker-2"), { timeoutMs: 10_000 });
    const changes = await stored("registry.trust.roots_changed");
    expect(changes.map((e) => e.data)).toEqual([
      expect.objectContaining({ tenant: "globex", change: "set", mode: "require", approval: "auto", kids: ["globex-1"], by: "alice" }),
      expect.objectContaining({ tenant: "globex", change: "set", mode: "require", kids: ["globex-2"], by: "bob" }),
      expect.objectContaining({ tenant: "globex", change: "deleted", mode: null, approval: null, kids: [], by: null }),
    ]);
    expect(changes.map((e) => e.subject)).toEqual(["globex", "globex", "globex"]);
    const trustChanges = (await stored("registry.agent.trust_changed")).map((e) => e.data);
    expect(trustChanges.at(-1)).toMatchObject({ agent_type: "globex-summarizer", previous_state: "verified", state: "unverified", reason: "mode_off" });
  });

  it("the file wins for a tenant it comes to name, and the bucket's entry applies again once it stops", { timeout: 60_000 }, async () => {
    const set = await c.request("trust.set.initech", { trust: entry(k1, { signers: [{ kid: k1.kid, publisher: "Initech", agent_types: ["initech-*"] }] }), revision: 0 });
    expect(set.ok, JSON.stringify(set.body)).toBe(true);
    const inForce = async () => (await c.request("trust.get.initech")).body.in_force;
    await waitFor(async () => (await inForce()) === "bucket");
    writeFileSync(join(dir, "trust.json"), JSON.stringify({ tenants: { acme: { approval: "auto" }, initech: { approval: "manual" } } }));
    await waitFor(async () => (await inForce()) === "file", { timeoutMs: 20_000, message: "the file's entry for initech did not win" });
    await waitFor(() => replicas.every((r) => r.logs.some((l) => l.msg === "trust roots reloaded")), { timeoutMs: 20_000 });
    // Unsigned is stored (the file's initech verifies nothing), and waits for approval.
    const unsigned = await c.request("tenant.initech.register.initech-bot", { spec: spec("initech-bot", { tenant_scope: "initech" }) });
    expect(unsigned.body).toMatchObject({ approval: { state: "pending" } });
    // A change of another tenant's entry meanwhile makes every replica read the bucket again while the file names initech.
    expect((await c.request("trust.set.hooli", { trust: { approval: "manual" } })).ok).toBe(true);
    await allFollow("hooli's set");
    writeFileSync(join(dir, "trust.json"), JSON.stringify({ tenants: { acme: { approval: "auto" } } }));
    await waitFor(async () => (await inForce()) === "bucket", { timeoutMs: 20_000, message: "the bucket's entry for initech did not apply again" });
    // The bucket's roots require signatures again: the stored unsigned spec is withheld.
    await waitFor(async () => (await c.request("tenant.initech.get", { agent_type: "initech-bot" })).body.agent?.trust?.lapse?.state === "withheld", { timeoutMs: 20_000 });
    expect((await c.request("trust.delete.initech", {})).ok).toBe(true);
    expect((await c.request("trust.delete.hooli", {})).ok).toBe(true);
  });

  it("refuses bad bodies with structured errors and stores nothing", { timeout: 60_000 }, async () => {
    const refusals: Array<[unknown, string, RegExp]> = [
      [{ trust: { ...entry(k1), jwks_file: "/etc/passwd" } }, "trust.jwks_file", /never taken from the bucket/],
      [{ trust: { ...entry(k1), jwks_url: { url: "https://keys.example/jwks.json" } } }, "trust.jwks_url", /never taken from the bucket/],
      [{ trust: entry(k1, { jwks: { keys: [{ ...k1.privateKey.export({ format: "jwk" }), kid: "globex-1", alg: "EdDSA" }] } }) }, "trust.jwks.keys.0", /private key/],
      [{ trust: entry(k1, { signers: [{ kid: "nobody", publisher: "Globex", agent_types: ["globex-*"] }] }) }, "trust", /key id nobody is not among the tenant's keys/],
      [{ trust: entry(k1, { signers: [] }) }, "trust", /would refuse every signature/],
      [{ trust: entry(k1, { mode: "sometimes" }) }, "trust.mode", /./],
      [{ trust: entry(k1), revision: -1 }, "revision", /./],
      [{}, "trust", /./],
    ];
    for (const [body, path, message] of refusals) {
      const r = await c.request("trust.set.globex", body);
      expect(r.body.error?.code, JSON.stringify(body).slice(0, 200)).toBe("invalid_request");
      expect(r.body.error.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringMatching(message) })]));
    }
    // Too large to store: many grants with long publishers, under the request limit but over the entry's.
    const many = Array.from({ length: 300 }, (_, i) => ({ kid: k1.kid, publisher: `${"p".repeat(240)}${i}`, agent_types: ["globex-*"] }));
    const large = await c.request("trust.set.globex", { trust: entry(k1, { signers: many }) });
    expect(large.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "trust", message: expect.stringMatching(/over 65536 bytes/) }] });
    // A tenant the trust file names keeps the file's roots: the bucket takes none for it.
    const acme = await c.request("trust.set.acme", { trust: entry(k1) });
    expect(acme.body.error).toMatchObject({ code: "conflict", message: expect.stringMatching(/come from the trust file/) });
    expect((await c.request("trust.get.acme")).body).toMatchObject({ trust: null, in_force: "file" });
    const bad = await c.request("trust.set.Not_A_Tenant", { trust: entry(k1) });
    expect(bad.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "tenant" }] });
    // Nothing was stored by any of them.
    expect((await c.request("trust.get.globex")).body).toMatchObject({ trust: null, revision: null });
  });

  it("a replica started later applies the roots the bucket holds before it serves", { timeout: 60_000 }, async () => {
    const set = await c.request("trust.set.globex", { trust: entry(k1), by: "dave" });
    expect(set.ok, JSON.stringify(set.body)).toBe(true);
    await allFollow("the set before the restart");
    const config = configOf(replicas[0]!);
    for (const r of replicas.splice(0)) await r.stop();
    replicas = [await startRegistry(server.url, {}, config)];
    // The only replica now: its very first answer judges by the bucket's roots.
    const unsigned = await c.request("tenant.globex.register.globex-late", { spec: spec("globex-late", { tenant_scope: "globex" }) });
    expect(unsigned.body.error?.issues?.[0]?.message).toMatch(/^signature_required: /);
  });
});
