/**
 * docs/trust.md's worked example on a real registry: its shell commands run as written
 * (openssl makes the key and the signature, the registry's own canonicalize package the JCS
 * form), the registry starts with the trust file they write, and tenant acme, set to require,
 * refuses an unsigned agent and one signed by another key (storing nothing), stores the signed
 * spec as verified, and a verified-only lookup, route, find, search or discover never returns
 * the unverified impostor.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractBlocks } from "../unit/doc-blocks.js";
import { ensureBuilt, runCli } from "../harness/cli.js";
import { jcs, pythonSign } from "../harness/independent-signer.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

const root = new URL("../../", import.meta.url).pathname;
const DOC = "docs/trust.md";

let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trust-example-"));
  // "A directory where agent-registry is installed": its packages, as an operator's project has them.
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  const text = readFileSync(join(root, DOC), "utf8");
  // All but those of "When trust roots change", whose revocation trust-reload.test.ts runs.
  const lines = text.split("\n");
  const from = lines.findIndex((l) => l.startsWith("## When trust roots change")) + 1;
  const to = lines.findIndex((l, i) => i >= from && l.startsWith("## ")) + 1;
  const blocks = extractBlocks(DOC, text).filter((b) => b.lang === "sh" && (b.line < from || b.line > to));
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  for (const b of blocks) {
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", b.code], { cwd: dir, encoding: "utf8" });
    expect(run.status, `${DOC}:${b.line}: ${run.stderr}`).toBe(0);
  }
  server = await withNatsServer();
  reg = await startRegistry(server.url, { trustFile: join(dir, "trust.json"), cardSigningKey: join(dir, "registry-card-key.json") });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const body = (): Record<string, any> => JSON.parse(readFileSync(join(dir, "register-body.json"), "utf8"));
const docJson = (n: number): Record<string, unknown> => {
  const blocks = extractBlocks(DOC, readFileSync(join(root, DOC), "utf8")).filter((b) => b.lang === "json");
  return JSON.parse(blocks[n]!.code);
};

describe("docs/trust.md, tenant acme set to require", () => {
  it("refuses the spec unsigned, and stores nothing", async () => {
    const unsigned = { spec: { ...body()["spec"], agent_type: "acme-impostor", nats_subject: "agent.tasks.acme-impostor", consumer_group: "acme-impostor" } };
    const r = await c.request("tenant.acme.register.acme-impostor", unsigned);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.issues[0]).toMatchObject({ path: "signature" });
    expect(r.body.error.issues[0].message).toMatch(/^signature_required: /);
    expect((await c.request("tenant.acme.get", { agent_type: "acme-impostor" })).body.error.code).toBe("not_found");
  });

  it("refuses the spec signed by a key acme's roots do not hold, even one naming acme's kid, and stores nothing", async () => {
    const impostor = { ...body()["spec"], agent_type: "acme-impostor", nats_subject: "agent.tasks.acme-impostor", consumer_group: "acme-impostor" };
    const forged = pythonSign({ key: "EdDSA", protected: { alg: "EdDSA", kid: "acme-2026", jku: "https://impostor.example/jwks.json" }, payload: jcs(impostor) });
    const r = await c.request("tenant.acme.register.acme-impostor", { spec: impostor, signature: { protected: forged.protected, signature: forged.signature } });
    expect(r.status).toBe(400);
    expect(r.body.error.issues[0].message).toMatch(/^bad_signature: /);
    // The documented body with one byte of its spec changed.
    const tampered = body();
    tampered["spec"]["description"] = "Summarizes documents for Acmf";
    const t = await c.request("tenant.acme.register.acme-summarizer", tampered);
    expect(t.body.error.issues[0].message).toMatch(/^bad_signature: /);
    expect((await c.request("tenant.acme.get", { agent_type: "acme-impostor" })).body.error.code).toBe("not_found");
    expect((await c.request("tenant.acme.get", { agent_type: "acme-summarizer" })).body.error.code).toBe("not_found");
  });

  it("stores the signed spec as verified, with key id, publisher and time", async () => {
    const r = await c.request("tenant.acme.register.acme-summarizer", body());
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await c.request("tenant.acme.get", { agent_type: "acme-summarizer", min_revision: r.body.revision });
    expect(got.body.agent.trust).toMatchObject({ verified: true, kid: "acme-2026", publisher: "Acme Corp" });
    expect(Date.parse(got.body.agent.trust.verified_at)).toBeGreaterThan(0);
    // Registered again unchanged (an agent's restart): still verified, the record not rewritten.
    const again = await c.request("tenant.acme.register.acme-summarizer", body());
    expect(again.ok).toBe(true);
    const after = await c.request("tenant.acme.get", { agent_type: "acme-summarizer", min_revision: again.body.revision });
    expect(after.body.agent.revision).toBe(got.body.agent.revision);
    expect(after.body.agent.trust).toEqual(got.body.agent.trust);
  });

  it("a verified-only lookup and route never return the unverified impostor", async () => {
    // Shared agents' mode is off: an impostor providing the same capability is stored, unverified.
    const shared = spec("summarize-anything", { capabilities: [{ name: "summarize", description: "Summarizes anything", input_schema: { type: "object" }, output_schema: {} }], weight: 1000 });
    const s = await c.request("register.summarize-anything", { spec: shared });
    expect(s.ok, JSON.stringify(s.body)).toBe(true);
    const all = await c.request("tenant.acme.lookup", { capability: "summarize", min_revision: s.body.revision });
    expect(Object.fromEntries(all.body.providers.map((p: any) => [p.agent_type, p.verified]))).toEqual({ "acme-summarizer": true, "summarize-anything": false });
    const verified = await c.request("tenant.acme.lookup", docJson(0));
    expect(verified.body.providers.map((p: any) => p.agent_type)).toEqual(["acme-summarizer"]);
    // The impostor's weight wins an open route; verified_only never picks it.
    expect((await c.request("tenant.acme.route", { skill: "summarize" })).body.agent_type).toBe("summarize-anything");
    const routed = await c.request("tenant.acme.route", docJson(1));
    expect(routed.body).toMatchObject({ agent_type: "acme-summarizer", candidates: [{ agent_type: "acme-summarizer" }] });
    expect(routed.body.candidates).toHaveLength(1);
    // find, search and discover take the flag too.
    const found = await c.request("tenant.acme.find", { skill: "summarize", verified_only: true });
    expect(found.body.agents.map((a: any) => [a.agent_type, a.trust.verified])).toEqual([["acme-summarizer", true]]);
    expect((await c.request("tenant.acme.find", { skill: "summarize" })).body.agents).toHaveLength(2);
    const searched = await c.request("tenant.acme.search", { query: "summarizes", verified_only: true });
    expect(searched.body.results.map((r: any) => r.agent_type)).toEqual(["acme-summarizer"]);
    const discovered = await c.request("tenant.acme.discover", { capability: "summarize", verified_only: true });
    expect(discovered.body.agents.map((a: any) => a.id)).toEqual(["acme-summarizer"]);
    // Without any verified provider, a verified-only route is no_route rather than a fallback.
    const none = await c.request("route", { skill: "summarize", verified_only: true });
    expect(none.body.error.code).toBe("no_route");
  });

  it("signs exported cards with the key the document generates, and publishes its public half", async () => {
    const jwks = (await (await fetch(`http://127.0.0.1:${reg.httpPort}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys.map((k) => [k["kid"], k["alg"], k["d"]])).toEqual([["registry-2026", "EdDSA", undefined]]);
    const card = await c.request("tenant.acme.card", { agent_type: "acme-summarizer" });
    expect(card.ok, JSON.stringify(card.body)).toBe(true);
    const header = JSON.parse(Buffer.from(card.body.card.signatures[0].protected, "base64url").toString());
    expect(header).toEqual({ alg: "EdDSA", kid: "registry-2026" });
  });

  it("the CLI's find, search and discover take --verified-only", { timeout: 120_000 }, async () => {
    await ensureBuilt();
    const cli = async (...args: string[]) => {
      const r = await runCli([...args, "--nats", server.url, "--prefix", configOf(reg).prefix, "--tenant", "acme", "--verified-only", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    expect((await cli("find", "--skill", "summarize")).agents.map((a: any) => a.agent_type)).toEqual(["acme-summarizer"]);
    expect((await cli("search", "summarizes")).results.map((r: any) => r.agent_type)).toEqual(["acme-summarizer"]);
    expect((await cli("discover", "--capability", "summarize")).agents.map((a: any) => a.id)).toEqual(["acme-summarizer"]);
  });
});
