/**
 * docs/trust.md, "When trust roots change", on two real replicas sharing one trust file: the
 * first worked example's commands make acme's key, trust file and signed spec; the spec is
 * stored verified; then the revocation's commands run as written while both replicas run. The
 * spec turns withheld (acme requires signatures), one `registry.agent.trust_changed` is stored
 * for it however many replicas judged, and neither a verified-only nor a plain lookup returns
 * it. Signed again with the new key, it is verified again; a broken trust file keeps the last
 * good roots.
 */
import { spawnSync } from "node:child_process";
import { createPrivateKey, sign } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractBlocks } from "../unit/doc-blocks.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const root = new URL("../../", import.meta.url).pathname;
const DOC = "docs/trust.md";
const SECTION = "## When trust roots change";

let dir: string;
let server: NatsTestServer;
let replicas: TestRegistry[] = [];
let c: RawClient;

/** The doc's sh blocks before the section (setup) or in it (the revocation). */
function shBlocks(inSection: boolean) {
  const text = readFileSync(join(root, DOC), "utf8");
  const lines = text.split("\n");
  const from = lines.findIndex((l) => l.startsWith(SECTION)) + 1;
  const to = lines.findIndex((l, i) => i >= from && l.startsWith("## "));
  return extractBlocks(DOC, text).filter((b) => b.lang === "sh" && (inSection ? b.line > from && b.line < to + 1 : b.line < from));
}

/** The section's JSON blocks: the trust a get shows, then the event. */
function sectionJson(): Array<Record<string, any>> {
  const text = readFileSync(join(root, DOC), "utf8");
  const lines = text.split("\n");
  const from = lines.findIndex((l) => l.startsWith(SECTION)) + 1;
  const to = lines.findIndex((l, i) => i >= from && l.startsWith("## "));
  return extractBlocks(DOC, text).filter((b) => b.lang === "json" && b.line > from && b.line < to + 1).map((b) => JSON.parse(b.code));
}

function runBlocks(blocks: ReturnType<typeof shBlocks>): void {
  for (const b of blocks) {
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", b.code], { cwd: dir, encoding: "utf8" });
    expect(run.status, `${DOC}:${b.line}: ${run.stderr}`).toBe(0);
  }
}

const registerBody = (): Record<string, any> => ({ ...JSON.parse(readFileSync(join(dir, "register-body.json"), "utf8")), heartbeat_interval_ms: 600_000 });
const trustOf = async (min_revision?: number) => (await c.request("tenant.acme.get", { agent_type: "acme-summarizer", ...(min_revision ? { min_revision } : {}) })).body.agent.trust;
const lookup = async (verified_only: boolean) => (await c.request("tenant.acme.lookup", { capability: "summarize", verified_only })).body.providers.map((p: any) => p.agent_type);
const trustEvents = async () => (await readStoredEvents(c.nc, configOf(replicas[0]!).eventsStream)).filter((e) => e.event.type === "registry.agent.trust_changed").map((e) => e.event.data);
const judgedAfterReload = (r: TestRegistry) => r.logs.some((l) => l.msg === "stored specs judged again against the trust roots" && l["reason"] === "trust roots reloaded");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trust-reload-"));
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  runBlocks(shBlocks(false));
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

describe("docs/trust.md, revoking acme's key while two replicas run", () => {
  it("stores the spec signed with acme-2026 as verified, and keeps its signature", async () => {
    const r = await c.request("tenant.acme.register.acme-summarizer", registerBody());
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(await trustOf(r.body.revision)).toMatchObject({ verified: true, kid: "acme-2026" });
    await waitFor(async () => (await lookup(true)).includes("acme-summarizer"));
  });

  it("after the revocation's commands, the spec is withheld, once, on every replica", { timeout: 60_000 }, async () => {
    runBlocks(shBlocks(true));
    await waitFor(async () => (await trustOf())?.lapse?.state === "withheld", { timeoutMs: 20_000, message: "the spec was not withheld" });
    expect(await trustOf()).toMatchObject({ verified: false, lapse: { state: "withheld", reason: "unknown_key", kid: "acme-2026" } });
    // Neither verified-only nor plain lookups return it: acme requires signatures.
    expect(await lookup(true)).toEqual([]);
    expect(await lookup(false)).toEqual([]);
    expect((await c.request("tenant.acme.route", { skill: "summarize" })).body.error.code).toBe("no_route");
    const card = await c.request("tenant.acme.card", { agent_type: "acme-summarizer" });
    expect(card.body.error).toMatchObject({ code: "not_found", message: expect.stringMatching(/withheld/) });
    // Both replicas read the new roots and judged every spec; only one write, so one event.
    await waitFor(() => replicas.every(judgedAfterReload), { timeoutMs: 20_000, message: "a replica did not judge after the reload" });
    await waitFor(async () => (await trustEvents()).length >= 1, { timeoutMs: 10_000 });
    // The old signature is refused now, and stores nothing.
    const again = await c.request("tenant.acme.register.acme-summarizer", registerBody());
    expect(again.body.error.issues[0].message).toMatch(/^unknown_key: /);
    // Events are stored in store order: once a later write's event is stored, so is every
    // event of a write before it, the losing replica's included if it had written.
    const marker = await c.request("register.marker", { spec: spec("marker") });
    expect(marker.ok, JSON.stringify(marker.body)).toBe(true);
    await waitFor(async () => (await readStoredEvents(c.nc, configOf(replicas[0]!).eventsStream)).some((e) => e.event.subject === "marker"), { timeoutMs: 10_000 });
    const events = await trustEvents();
    expect(events).toEqual([
      expect.objectContaining({ agent_type: "acme-summarizer", version: "1.0.0", tenant_scope: "acme", previous_state: "verified", state: "withheld", kid: "acme-2026", publisher: "Acme Corp", reason: "unknown_key" }),
    ]);
    // What the document shows: the same members, the same values but for times and revisions.
    const [shownTrust, shownEvent] = sectionJson();
    expect(Object.keys(events[0]).sort()).toEqual(Object.keys(shownEvent!).sort());
    expect({ ...events[0], revision: 0 }).toEqual({ ...shownEvent, revision: 0 });
    const got = await trustOf();
    expect({ ...got, lapse: { ...got.lapse, at: "" } }).toEqual({ ...shownTrust, lapse: { ...shownTrust!["lapse"], at: "" } });
  });

  it("signed with the new key and registered again, it is verified and routed again", async () => {
    const body = registerBody();
    const prot = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "acme-2027" })).toString("base64url");
    const input = `${prot}.${Buffer.from(canonicalize(body["spec"])!).toString("base64url")}`;
    const signature = sign(null, Buffer.from(input), createPrivateKey(readFileSync(join(dir, "acme-signer-2027.pem")))).toString("base64url");
    const r = await c.request("tenant.acme.register.acme-summarizer", { ...body, signature: { protected: prot, signature } });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(await trustOf(r.body.revision)).toMatchObject({ verified: true, kid: "acme-2027" });
    await waitFor(async () => (await lookup(true)).includes("acme-summarizer"));
    await waitFor(async () => (await trustEvents()).length === 2, { timeoutMs: 10_000 });
    expect((await trustEvents())[1]).toMatchObject({ previous_state: "withheld", state: "verified", kid: "acme-2027", reason: "verified" });
  });

  it("a broken trust file is logged and counted, and the last good roots stay", { timeout: 30_000 }, async () => {
    writeFileSync(join(dir, "trust.json"), "{ not json");
    await waitFor(() => replicas.every((r) => r.logs.some((l) => l.msg === "trust file not applied; keeping the last good trust roots")), { timeoutMs: 20_000 });
    const metrics = await (await fetch(`http://127.0.0.1:${replicas[0]!.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/^agent_registry_trust_file_errors_total [1-9]/m);
    // Still judged by the last good roots: verified, and nothing changed.
    expect(await trustOf()).toMatchObject({ verified: true, kid: "acme-2027" });
    expect(await trustEvents()).toHaveLength(2);
  });
});
