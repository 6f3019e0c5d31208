/**
 * The registry's own signature on exported cards (docs/trust.md): with REGISTRY_CARD_SIGNING_KEY
 * set, the `card` op and the ops port's agent-card.json carry one signature, a JWS over the JCS
 * form of the card without `signatures`, which Node's own crypto (not jose, which signed it)
 * verifies with the public key the ops port serves at /.well-known/jwks.json. Without the key,
 * cards go unsigned and the JWKS path is 404; a key file that is no private JWK stops the start.
 */
import { createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { jcs } from "../harness/independent-signer.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

let dir: string;
let server: NatsTestServer;
let signed: TestRegistry;
let c: RawClient;
let keyFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "card-signing-"));
  const { privateKey } = generateKeyPairSync("ed25519");
  keyFile = join(dir, "registry-card-key.json");
  writeFileSync(keyFile, JSON.stringify({ ...privateKey.export({ format: "jwk" }), kid: "registry-2026", alg: "EdDSA" }));
  server = await withNatsServer();
  signed = await startRegistry(server.url, { cardSigningKey: keyFile });
  c = await RawClient.connect(server.url, configOf(signed).prefix);
  const r = await c.request("register.exported", { spec: spec("exported") });
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  // The exports below send no min_revision (HTTP has none): they run once the view holds the agent.
  expect((await c.request("get", { agent_type: "exported", min_revision: r.body.revision })).ok).toBe(true);
});

afterAll(async () => {
  await c?.close();
  await signed?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Checks the card's one signature with Node's crypto and the published key. */
function verifiedBy(card: Record<string, unknown>, jwks: { keys: Array<Record<string, unknown>> }): boolean {
  const [sig, ...more] = card["signatures"] as Array<{ protected: string; signature: string }>;
  expect(more).toEqual([]);
  const header = JSON.parse(Buffer.from(sig!.protected, "base64url").toString()) as { alg: string; kid: string };
  expect(header).toEqual({ alg: "EdDSA", kid: "registry-2026" });
  const key = jwks.keys.find((k) => k["kid"] === header.kid)!;
  expect(key["d"]).toBeUndefined();
  const { signatures: _s, ...unsigned } = card;
  const input = `${sig!.protected}.${Buffer.from(jcs(unsigned)).toString("base64url")}`;
  return verify(null, Buffer.from(input), createPublicKey({ key: key as any, format: "jwk" }), Buffer.from(sig!.signature, "base64url"));
}

it("signs the card it exports over NATS and HTTP, verifiable with the key it publishes", async () => {
  const http = `http://127.0.0.1:${signed.httpPort}`;
  const jwks = (await (await fetch(`${http}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, unknown>> };
  expect(jwks.keys).toHaveLength(1);
  expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: "registry-2026", alg: "EdDSA", use: "sig" });
  for (const version of ["1.0", "0.3"]) {
    const overNats = await c.request("card", { agent_type: "exported", a2a_version: version });
    expect(overNats.ok, JSON.stringify(overNats.body)).toBe(true);
    expect(verifiedBy(overNats.body.card, jwks)).toBe(true);
  }
  const overHttp = (await (await fetch(`${http}/agents/exported/agent-card.json`)).json()) as Record<string, unknown>;
  expect(verifiedBy(overHttp, jwks)).toBe(true);
  // One byte changed, and the signature no longer holds.
  expect(verifiedBy({ ...overHttp, description: `${String(overHttp["description"])}!` }, jwks)).toBe(false);
});

it("exports unsigned cards, and answers 404 for the JWKS, without a signing key", async () => {
  const plain = await startRegistry(server.url);
  try {
    const pc = await RawClient.connect(server.url, configOf(plain).prefix);
    const registered = await pc.request("register.exported", { spec: spec("exported") });
    const r = await pc.request("card", { agent_type: "exported", min_revision: registered.body.revision });
    expect(r.body.card.signatures).toBeUndefined();
    await pc.close();
    const jwks = await fetch(`http://127.0.0.1:${plain.httpPort}/.well-known/jwks.json`);
    expect(jwks.status).toBe(404);
    expect(((await jwks.json()) as any).error.message).toContain("REGISTRY_CARD_SIGNING_KEY");
  } finally {
    await plain.stop();
  }
});

it("does not start with a key file that holds no private JWK, naming the setting and the problem", async () => {
  const publicOnly = join(dir, "public.json");
  const { publicKey } = generateKeyPairSync("ed25519");
  writeFileSync(publicOnly, JSON.stringify({ ...publicKey.export({ format: "jwk" }), kid: "k", alg: "EdDSA" }));
  await expect(startRegistry(server.url, { cardSigningKey: publicOnly })).rejects.toThrow(/REGISTRY_CARD_SIGNING_KEY=.*public\.json: the JWK is not a private key/);
  const noKid = join(dir, "nokid.json");
  const { privateKey } = generateKeyPairSync("ed25519");
  writeFileSync(noKid, JSON.stringify({ ...privateKey.export({ format: "jwk" }), alg: "EdDSA" }));
  await expect(startRegistry(server.url, { cardSigningKey: noKid })).rejects.toThrow(/needs a kid/);
});
