/**
 * Keys from a JWKS URL (docs/trust.md, "Keys from a JWKS URL"): the fetcher's bounds (https
 * only, public addresses only however the host is spelled or resolves, no redirect, a size
 * limit, a deadline) against a real local https server, and a registry whose tenant's keys
 * come from that server: a signed spec verifies, a failed refresh keeps the last good keys
 * (logged, counted), and a refresh that rotates the key withholds the spec, with its event.
 * The server is on loopback, so the registry runs with the test-only
 * REGISTRY_TRUST_JWKS_ALLOW_PRIVATE and the server's self-signed certificate as its CA.
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchJwks } from "../../src/adapters/http/jwks-fetch.js";
import { isPublicAddress } from "../../src/adapters/http/public-address.js";
import { trustDocument } from "../../src/domain/trust/trust-document.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { extractBlocks } from "../unit/doc-blocks.js";

const root = new URL("../../", import.meta.url).pathname;

let dir: string;
let ca: string;
let https: Server;
let base: string;
/** What /jwks.json answers now: a JWK set, or a status to fail with. */
let answer: { keys: unknown[] } | number;

const publicJwk = (k: KeyObject, kid: string) => ({ ...k.export({ format: "jwk" }), kid, alg: "EdDSA" });
const first = generateKeyPairSync("ed25519");
const second = generateKeyPairSync("ed25519");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trust-jwks-url-"));
  const made = spawnSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-days", "1", "-keyout", "key.pem", "-out", "cert.pem"],
    { cwd: dir, encoding: "utf8" },
  );
  expect(made.status, made.stderr).toBe(0);
  ca = readFileSync(join(dir, "cert.pem"), "utf8");
  answer = { keys: [publicJwk(first.publicKey, "acme-k1")] };
  https = createServer({ key: readFileSync(join(dir, "key.pem")), cert: ca }, (req, res) => {
    if (req.url === "/jwks.json") {
      if (typeof answer === "number") return void res.writeHead(answer).end();
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    }
    if (req.url === "/big") return void res.writeHead(200).end(JSON.stringify({ keys: [], pad: "x".repeat(100_000) }));
    if (req.url === "/redirect") return void res.writeHead(302, { location: "/jwks.json" }).end();
    if (req.url === "/slow") return; // never answers
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
  base = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
});

afterAll(async () => {
  https?.closeAllConnections();
  await new Promise((resolve) => https?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the JWKS URL fetcher's bounds", () => {
  // Read when a test runs: the certificate is made in beforeAll.
  let opts: { maxBytes: number; timeoutMs: number; ca: string; allowPrivate: boolean };
  beforeAll(() => {
    opts = { maxBytes: 64 * 1024, timeoutMs: 1000, ca, allowPrivate: true };
  });

  it("takes only an https jwks_url in the trust file, refreshed at most every 30 s", () => {
    const tenant = (jwks_url: unknown) => trustDocument.safeParse({ tenants: { acme: { mode: "require", jwks_url, signers: [{ kid: "k", publisher: "p", agent_types: ["*"] }] } } });
    expect(tenant({ url: "http://keys.acme.example/jwks.json" }).success).toBe(false);
    expect(tenant({ url: "https://keys.acme.example/jwks.json", refresh_seconds: 10 }).success).toBe(false);
    expect(tenant({ url: "https://keys.acme.example/jwks.json", extra: 1 }).success).toBe(false);
    const ok = tenant({ url: "https://keys.acme.example/jwks.json" });
    expect(ok.success && ok.data.tenants["acme"]!.jwks_url).toEqual({ url: "https://keys.acme.example/jwks.json", refresh_seconds: 300 });
  });

  it("judges addresses public or not however they are spelled", () => {
    for (const a of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "169.254.169.254", "10.1.2.3", "172.20.0.1", "192.168.1.1", "100.64.0.1", "0.0.0.0", "fd00::1", "fe80::1", "64:ff9b::a9fe:a9fe", "224.0.0.1", "not an ip"]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
    for (const a of ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(isPublicAddress(a), a).toBe(true);
  });

  it("refuses http, credentials, a loopback address and a name resolving to loopback unless the test override is set", async () => {
    await expect(fetchJwks("http://127.0.0.1/jwks.json", opts)).rejects.toThrow(/only https/);
    await expect(fetchJwks(`https://user:pw@127.0.0.1/jwks.json`, opts)).rejects.toThrow(/credentials/);
    const strict = { ...opts, allowPrivate: false };
    await expect(fetchJwks(`${base}/jwks.json`, strict)).rejects.toThrow(/127\.0\.0\.1 is not a public address/);
    const port = new URL(base).port;
    await expect(fetchJwks(`https://localhost:${port}/jwks.json`, strict)).rejects.toThrow(/resolves to (127\.0\.0\.1|::1), not a public address/);
    await expect(fetchJwks(`https://[::ffff:127.0.0.1]:${port}/jwks.json`, strict)).rejects.toThrow(/not a public address/);
    expect(await fetchJwks(`${base}/jwks.json`, opts)).toEqual(answer);
  });

  it("refuses an answer too large, a redirect, and one that does not come in time", async () => {
    await expect(fetchJwks(`${base}/big`, opts)).rejects.toThrow(/bytes/);
    await expect(fetchJwks(`${base}/redirect`, opts)).rejects.toThrow(/answered 302 \(redirects are not followed\)/);
    await expect(fetchJwks(`${base}/slow`, { ...opts, timeoutMs: 300 })).rejects.toThrow(/no complete answer within 300 ms/);
    // Without the server's certificate as a CA, the self-signed server is not trusted.
    await expect(fetchJwks(`${base}/jwks.json`, { maxBytes: 65536, timeoutMs: 1000, allowPrivate: true })).rejects.toThrow(/certificate/);
  });
});

describe("a tenant whose keys come from a JWKS URL", () => {
  let server: NatsTestServer;
  let reg: TestRegistry;
  let c: RawClient;
  const agentSpec = { ...spec("acme-url"), tenant_scope: "acme" };

  beforeAll(async () => {
    answer = { keys: [publicJwk(first.publicKey, "acme-k1")] };
    writeFileSync(join(dir, "ca.pem"), ca);
    // docs/trust.md's trust file, with the local server's URL and the shortest refresh.
    const text = readFileSync(join(root, "docs/trust.md"), "utf8");
    const shown = extractBlocks("docs/trust.md", text).find((b) => b.lang === "json" && b.code.includes("jwks_url"));
    const doc = JSON.parse(shown!.code);
    expect(doc.tenants.acme.jwks_url.url).toBe("https://keys.acme.example/jwks.json");
    doc.tenants.acme.jwks_url = { url: `${base}/jwks.json`, refresh_seconds: 30 };
    writeFileSync(join(dir, "trust.json"), JSON.stringify(doc));
    server = await withNatsServer();
    reg = await startRegistry(server.url, { trustFile: join(dir, "trust.json"), trustJwksAllowPrivate: true, trustJwksCaFile: join(dir, "ca.pem") });
    c = await RawClient.connect(server.url, configOf(reg).prefix);
  });

  afterAll(async () => {
    await c?.close();
    await reg?.stop();
    await server?.stop();
  });

  const trustOf = async () => (await c.request("tenant.acme.get", { agent_type: "acme-url" })).body.agent.trust;

  it("verifies a spec signed by the URL's key; a failed refresh keeps it; a refresh that rotates the key withholds it", { timeout: 120_000 }, async () => {
    const prot = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "acme-k1" })).toString("base64url");
    const input = `${prot}.${Buffer.from(canonicalize(agentSpec)!).toString("base64url")}`;
    const signature = sign(null, Buffer.from(input), first.privateKey).toString("base64url");
    const r = await c.request("tenant.acme.register.acme-url", { spec: agentSpec, signature: { protected: prot, signature }, heartbeat_interval_ms: 600_000 });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    await waitFor(async () => (await trustOf())?.verified === true);

    // The key server fails: logged and counted at the next refresh, the last good keys stay.
    answer = 500;
    await waitFor(() => reg.logs.some((l) => l.msg === "JWKS URL not fetched; keeping its last good keys"), { timeoutMs: 50_000, intervalMs: 500 });
    const metrics = await (await fetch(`http://127.0.0.1:${reg.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/^agent_registry_trust_jwks_fetch_errors_total [1-9]/m);
    expect(await trustOf()).toMatchObject({ verified: true, kid: "acme-k1" });

    // The key is rotated at the server (same kid, another key): the next refresh withholds the spec.
    answer = { keys: [publicJwk(second.publicKey, "acme-k1")] };
    await waitFor(async () => (await trustOf())?.lapse?.state === "withheld", { timeoutMs: 50_000, intervalMs: 500 });
    expect((await trustOf()).lapse).toMatchObject({ reason: "bad_signature", kid: "acme-k1" });
    await waitFor(async () => (await readStoredEvents(c.nc, configOf(reg).eventsStream)).some((e) => e.event.type === "registry.agent.trust_changed"));
    const lookup = await c.request("tenant.acme.lookup", { capability: "acme-url.run" });
    expect(lookup.body.providers).toEqual([]);
  });
});
