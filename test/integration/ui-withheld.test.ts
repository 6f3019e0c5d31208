/**
 * What the web page shows of trust and deprecation (docs/ui.md), on a real registry whose trust
 * file makes shared agents and tenant acme `require` signatures, in a real browser (Debian's
 * Chromium through playwright-core): once a key leaves the trust file, the specs it signed are
 * withheld, and the approvals view's "withheld by trust" list shows them (every tenant's) with
 * the reason and key, live; the fleet marks the shared one withheld and not routed. A
 * deprecated agent type carries a "deprecated" badge in the fleet and on its page, with who,
 * why and the successor, and loses it live when undeprecated. Screenshots go to .ci/out/
 * (ui-withheld.png is docs/ui-withheld.png).
 */
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import type { ApprovalsPage } from "../../src/ui/shared.js";
import { buildWebPage, launchChromium, SCREENSHOTS, type TestBrowser } from "../harness/browser.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const LONG = 600_000;
const k1 = generateKeyPairSync("ed25519");
const k2 = generateKeyPairSync("ed25519");
const jwk = (k: KeyObject, kid: string) => ({ ...k.export({ format: "jwk" }), kid, alg: "EdDSA" });

/** The trust file: shared agents and acme require signatures; `k2` signs ui-held and acme's agents while it is there. */
function trustFile(withK2: boolean): string {
  const k2Grant = (publisher: string, types: string[]) => (withK2 ? [{ kid: "k2", publisher, agent_types: types }] : []);
  return JSON.stringify({
    shared: { mode: "require", jwks: { keys: [jwk(k1.publicKey, "k1"), ...(withK2 ? [jwk(k2.publicKey, "k2")] : [])] }, signers: [{ kid: "k1", publisher: "Ops", agent_types: ["ui-sum*"] }, ...k2Grant("Old Ops", ["ui-held"])] },
    // Without k2, acme trusts k1 for another agent type only (a tenant's roots name at least one key and grant).
    tenants: { acme: { mode: "require", jwks: { keys: [withK2 ? jwk(k2.publicKey, "k2") : jwk(k1.publicKey, "k1")] }, signers: withK2 ? k2Grant("Acme", ["acme-*"]) : [{ kid: "k1", publisher: "Acme", agent_types: ["acme-other"] }] } },
  });
}

let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let shared: RegistryClient;
let browser: TestBrowser;
let page: Page;
let base: string;

const text = async (selector: string): Promise<string | null> => (await page.locator(selector).count()) === 0 ? null : page.locator(selector).first().textContent();
const until = (selector: string, ok: (t: string | null) => boolean, message: string) => waitFor(async () => ok(await text(selector)), { message, timeoutMs: 20_000 });
const row = (agentType: string, col: string) => `tr[data-agent="${agentType}"] [data-col="${col}"]`;

/** Registers `type` with a spec signed by `key` under `kid`, on the tenant's subject when it has one. */
async function registerSigned(type: string, key: KeyObject, kid: string, tenant?: string, extra: Record<string, unknown> = {}): Promise<void> {
  const s = spec(type, { ...(tenant ? { tenant_scope: tenant } : {}), ...extra });
  const prot = Buffer.from(JSON.stringify({ alg: "EdDSA", kid })).toString("base64url");
  const signature = sign(null, Buffer.from(`${prot}.${Buffer.from(canonicalize(s)!).toString("base64url")}`), key).toString("base64url");
  const subject = tenant ? `tenant.${tenant}.register.${type}` : `register.${type}`;
  const r = await c.request(subject, { spec: s, signature: { protected: prot, signature }, instance_id: `${type}-1`, heartbeat_interval_ms: LONG });
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  expect(r.body.approval).toBeUndefined();
}

beforeAll(async () => {
  buildWebPage();
  dir = mkdtempSync(join(tmpdir(), "ui-withheld-"));
  writeFileSync(join(dir, "trust.json"), trustFile(true));
  browser = await launchChromium({ viewport: { width: 1280, height: 700 } });
  server = await withNatsServer();
  reg = await startRegistry(server.url, { trustFile: join(dir, "trust.json") });
  base = `http://127.0.0.1:${reg.httpPort}`;
  const prefix = configOf(reg).prefix;
  c = await RawClient.connect(server.url, prefix);
  shared = new RegistryClient(c.nc, { prefix });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
  await registerSigned("ui-summarizer", k1.privateKey, "k1", undefined, { description: "Summarizes documents (first generation)" });
  await registerSigned("ui-summarizer-v2", k1.privateKey, "k1", undefined, { description: "Summarizes documents" });
  await registerSigned("ui-held", k2.privateKey, "k2", undefined, { description: "Signed with the old operations key" });
  await registerSigned("acme-held", k2.privateKey, "k2", "acme", { description: "Acme's agent signed with k2", owner_team: "acme-ops" });
  page = await browser.context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await c?.close();
  await reg?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("lists the specs a revoked key signed under withheld by trust, with the reason, live, and marks the fleet", { timeout: 120_000 }, async () => {
  await page.goto(`${base}/ui/#/approvals?state=withheld`);
  await until("#approvals-summary", (t) => t === "0 specs withheld by trust", "nothing withheld yet");
  expect(await text("table.approvals tbody td")).toBe("No spec is withheld by trust.");
  // k2 leaves the trust file: the registry reads it again and withholds what k2 signed.
  writeFileSync(join(dir, "trust.json.new"), trustFile(false));
  renameSync(join(dir, "trust.json.new"), join(dir, "trust.json"));
  await until("#approvals-summary", (t) => t === "2 specs withheld by trust", "both withheld, live").catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\n${reg.logs.slice(-10).map((l) => JSON.stringify(l)).join("\n")}`, { cause: e });
  });
  expect(await text(row("acme-held", "tenant"))).toBe("acme");
  expect(await text(row("acme-held", "reason"))).toBe("unknown_key (key k2)");
  expect(await text(row("ui-held", "reason"))).toBe("unknown_key (key k2)");
  expect(await text(row("ui-held", "instances"))).toBe("1 (1 ready)");
  expect(await page.locator('tr[data-agent="ui-held"] [data-approval="withheld"]').count()).toBe(1);
  const listed = (await (await fetch(`${base}/ui/api/approvals?state=withheld`)).json()) as ApprovalsPage;
  expect(listed.agents.map((a) => [a.agent_type, a.withheld?.reason, a.withheld?.kid])).toEqual([["acme-held", "unknown_key", "k2"], ["ui-held", "unknown_key", "k2"]]);
  // The registry's own list, as `agent-registry pending --withheld` asks it: every tenant's, or one's.
  expect((await shared.pending({ state: "withheld" })).agents.map((a) => [a.agent_type, a.trust.verified ? null : a.trust.lapse?.state])).toEqual([["acme-held", "withheld"], ["ui-held", "withheld"]]);
  expect((await shared.pending({ state: "withheld", tenant: null })).agents.map((a) => a.agent_type)).toEqual(["ui-held"]);
  await page.screenshot({ path: `${SCREENSHOTS}ui-withheld.png` });

  // The fleet (shared agents): withheld, not routed, never "ready 1 / 1"; the agent's page says why.
  await page.goto(`${base}/ui/#/`);
  await until(row("ui-held", "status"), (t) => t?.startsWith("withheld") ?? false, "the fleet's badge");
  expect(await text(row("ui-held", "ready"))).toBe("not routed · 1");
  // The strip counts every tenant's, acme's included, in red, with a link to the list.
  await until('[data-tile="withheld"] .tile-value', (t) => t === "2", "the strip's withheld count");
  expect(await page.locator('[data-tile="withheld"].t-critical a[href="#/approvals?state=withheld"]').count()).toBe(1);
  await page.goto(`${base}/ui/#/agent/ui-held`);
  await until("#withheld-note", (t) => t?.includes("Reason unknown_key, key k2") ?? false, "the agent's note");
  expect(await page.locator("#agent-facts .links").count()).toBe(0);
});

it("marks a deprecated agent type in the fleet and on its page, still routed, and drops the badge live", { timeout: 90_000 }, async () => {
  await page.goto(`${base}/ui/#/`);
  await until(row("ui-summarizer", "status"), (t) => t === "ready", "the fleet");
  expect(await page.locator('tr[data-agent="ui-summarizer"] [data-deprecated]').count()).toBe(0);
  await shared.deprecate("ui-summarizer", { by: "alice", reason: "replaced by ui-summarizer-v2", successor: "ui-summarizer-v2" });
  await waitFor(async () => (await page.locator('tr[data-agent="ui-summarizer"] [data-deprecated]').count()) === 1, { message: "the badge, live", timeoutMs: 15_000 });
  expect(await page.locator('tr[data-agent="ui-summarizer"] [data-deprecated]').getAttribute("title")).toBe("deprecated by alice: replaced by ui-summarizer-v2; use ui-summarizer-v2 (still routed)");
  // Still routed: its status and ready count are as before.
  expect(await text(row("ui-summarizer", "status"))).toBe("ready");
  expect(await text(row("ui-summarizer", "ready"))).toBe("1 / 1");
  await page.screenshot({ path: `${SCREENSHOTS}ui-deprecated-fleet.png` });
  await page.goto(`${base}/ui/#/agent/ui-summarizer`);
  await until("#deprecated", (t) => t?.startsWith("by alice: replaced by ui-summarizer-v2; use ui-summarizer-v2") ?? false, "the agent's fact");
  expect(await page.locator("#agent-facts [data-deprecated]").count()).toBe(1);
  expect(await page.locator("#agent-facts .links").count()).toBe(1); // still exported
  await page.goto(`${base}/ui/#/`);
  await waitFor(async () => (await page.locator('tr[data-agent="ui-summarizer"] [data-deprecated]').count()) === 1, { message: "the fleet again" });
  await shared.undeprecate("ui-summarizer", { by: "alice" });
  await waitFor(async () => (await page.locator('tr[data-agent="ui-summarizer"] [data-deprecated]').count()) === 0, { message: "the badge goes, live", timeoutMs: 15_000 });
  // The feed says both in words.
  await page.goto(`${base}/ui/#/events`);
  await until('#feed li[data-type="registry.agent.deprecated"] .ev-detail', (t) => t === "v1.0.0 deprecated by alice: replaced by ui-summarizer-v2; use ui-summarizer-v2", "the deprecation in the feed");
  await until('#feed li[data-type="registry.agent.undeprecated"] .ev-detail', (t) => t === "v1.0.0 no longer deprecated (by alice)", "the withdrawal in the feed");
});
