/**
 * Signed A2A cards (A2A section 8.4), and a signed MCP tool spec, through a real registry, for a tenant set to
 * verify-if-present: a card signed by Python's `cryptography` over its JCS form without
 * `signatures` is stored verified; an unsigned card is stored unverified; a card whose signature
 * does not verify, or with a nats_subject beside it that no signature covers, is refused and
 * nothing is stored. Shared agents, with no trust of their own, register as in v1.1 even with a
 * signature that would not verify.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jcs, pythonSign, type Signed } from "../harness/independent-signer.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, startRegistry, type TestRegistry } from "../harness/registry.js";

const card = (name: string) => ({
  name,
  description: `${name}, a card`,
  version: "2.0.0",
  url: `https://globex.example/${name}`,
  skills: [{ id: "ledger-read", name: "Read the ledger", description: "Reads", tags: ["ledger"] }],
});

let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let signer: Signed;

const signCard = (unsigned: Record<string, unknown>, key = signer): { protected: string; signature: string } => {
  const s = pythonSign({ key: "EdDSA", pem: key.pem, protected: { alg: "EdDSA", kid: "globex-1" }, payload: jcs(unsigned) });
  return { protected: s.protected, signature: s.signature };
};

beforeAll(async () => {
  signer = pythonSign({ key: "EdDSA", protected: { alg: "EdDSA", kid: "globex-1" }, payload: "" });
  dir = mkdtempSync(join(tmpdir(), "trust-cards-"));
  const trustFile = join(dir, "trust.json");
  writeFileSync(
    trustFile,
    JSON.stringify({ tenants: { globex: { mode: "verify-if-present", jwks: { keys: [signer.jwk] }, signers: [{ kid: "globex-1", publisher: "Globex", agent_types: ["globex-*"] }] } } }),
  );
  server = await withNatsServer();
  reg = await startRegistry(server.url, { trustFile });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("signed A2A cards, tenant globex set to verify-if-present", () => {
  it("stores a card signed by an independent implementation as verified", async () => {
    const unsigned = card("globex-ledger");
    const r = await c.request("tenant.globex.register.globex-ledger", { a2a_card: { ...unsigned, signatures: [signCard(unsigned)] } });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await c.request("tenant.globex.get", { agent_type: "globex-ledger", min_revision: r.body.revision });
    expect(got.body.agent.trust).toMatchObject({ verified: true, kid: "globex-1", publisher: "Globex" });
  });

  it("stores an unsigned card unverified", async () => {
    const r = await c.request("tenant.globex.register.globex-plain", { a2a_card: card("globex-plain") });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await c.request("tenant.globex.get", { agent_type: "globex-plain", min_revision: r.body.revision });
    expect(got.body.agent.trust).toEqual({ verified: false });
    const verified = await c.request("tenant.globex.lookup", { capability: "ledger-read", verified_only: true, min_revision: r.body.revision });
    expect(verified.body.providers.map((p: any) => p.agent_type)).toEqual(["globex-ledger"]);
  });

  it("refuses a card whose signature covers another card, or beside which a nats_subject is unsigned, and stores nothing", async () => {
    const unsigned = card("globex-forged");
    const other = signCard({ ...unsigned, description: "what was signed" });
    const forged = await c.request("tenant.globex.register.globex-forged", { a2a_card: { ...unsigned, signatures: [other] } });
    expect(forged.status).toBe(400);
    expect(forged.body.error.issues[0]).toMatchObject({ path: "a2a_card.signatures.0.signature" });
    expect(forged.body.error.issues[0].message).toMatch(/^bad_signature: /);
    const redirected = await c.request("tenant.globex.register.globex-forged", { a2a_card: { ...unsigned, signatures: [signCard(unsigned)] }, nats_subject: "agent.tasks.elsewhere" });
    expect(redirected.body.error.issues[0]).toMatchObject({ path: "nats_subject" });
    expect(redirected.body.error.issues[0].message).toMatch(/^unsigned_fields: /);
    expect((await c.request("tenant.globex.get", { agent_type: "globex-forged" })).body.error.code).toBe("not_found");
  });

  it("stores a tool spec signed beside it (v1.2) as verified, and refuses the same body on another agent type's subject", async () => {
    const body = {
      mcp_toolspec: { tools: [{ name: "ledger-sum", description: "Sums the ledger", inputSchema: { type: "object" } }] },
      description: "Globex ledger tools",
      version: "1.0.0",
    };
    const s = pythonSign({ key: "EdDSA", pem: signer.pem, protected: { alg: "EdDSA", kid: "globex-1" }, payload: jcs({ ...body, agent_type: "globex-tools" }) });
    const signature = { protected: s.protected, signature: s.signature };
    const r = await c.request("tenant.globex.register.globex-tools", { ...body, signature });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await c.request("tenant.globex.get", { agent_type: "globex-tools", min_revision: r.body.revision });
    expect(got.body.agent.trust).toMatchObject({ verified: true, kid: "globex-1", publisher: "Globex" });
    const moved = await c.request("tenant.globex.register.globex-tools-copy", { ...body, signature });
    expect(moved.status).toBe(400);
    expect(moved.body.error.issues[0].message).toMatch(/^bad_signature: /);
    expect((await c.request("tenant.globex.get", { agent_type: "globex-tools-copy" })).body.error.code).toBe("not_found");
  });

  it("refuses 5,000 signatures (as many as a body may hold) by their count", async () => {
    const unsigned = card("globex-many");
    const many = Array.from({ length: 5_000 }, () => ({ protected: "e30", signature: "AA" }));
    const r = await c.request("tenant.globex.register.globex-many", { a2a_card: { ...unsigned, signatures: many } });
    expect(r.status).toBe(400);
    expect(r.body.error.issues[0].message).toMatch(/^too_many_signatures: 5000 signatures/);
  });

  it("leaves shared agents, which have no trust roots, as v1.1 had them", async () => {
    const unsigned = card("shared-ledger");
    const r = await c.request("register.shared-ledger", { a2a_card: { ...unsigned, signatures: [{ protected: "e30", signature: "AA" }, "not even a JWS"] } });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await c.request("get", { agent_type: "shared-ledger", min_revision: r.body.revision });
    expect(got.body.agent.trust).toEqual({ verified: false });
  });
});
