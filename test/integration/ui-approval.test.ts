/**
 * The approval gate on the web page (docs/ui.md, "Pending approval"), on a real registry whose
 * trust file sets shared agents and tenant acme to `manual`, in a real browser (Debian's
 * Chromium through playwright-core): the approvals view lists the specs waiting, every
 * tenant's; the fleet and the agent's page mark a pending agent and do not show it as serving;
 * an approval through the SDK takes the spec out of the view and the badge off the fleet live,
 * without a reload; a rejection shows who rejected it and why. Screenshots go to .ci/out/
 * (ui-approval.png is docs/ui-approval.png).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import type { AgentSpecInput } from "../../src/client/index.js";
import type { ApprovalsPage } from "../../src/ui/shared.js";
import { buildWebPage, launchChromium, SCREENSHOTS, type TestBrowser } from "../harness/browser.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const LONG = 600_000;
let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let shared: RegistryClient;
let acme: RegistryClient;
let browser: TestBrowser;
let page: Page;
let base: string;

const text = async (selector: string): Promise<string | null> => (await page.locator(selector).count()) === 0 ? null : page.locator(selector).first().textContent();
const until = (selector: string, ok: (t: string | null) => boolean, message: string) => waitFor(async () => ok(await text(selector)), { message, timeoutMs: 15_000 });
const row = (agentType: string, col: string) => `tr[data-agent="${agentType}"] [data-col="${col}"]`;
const api = async (path: string): Promise<{ status: number; body: unknown }> => {
  const res = await fetch(`${base}/ui/api/${path}`);
  return { status: res.status, body: await res.json() };
};

beforeAll(async () => {
  buildWebPage();
  dir = mkdtempSync(join(tmpdir(), "ui-approval-"));
  writeFileSync(join(dir, "trust.json"), JSON.stringify({ shared: { approval: "manual" }, tenants: { acme: { approval: "manual" } } }));
  browser = await launchChromium({ viewport: { width: 1280, height: 700 } });
  server = await withNatsServer();
  reg = await startRegistry(server.url, { trustFile: join(dir, "trust.json") });
  base = `http://127.0.0.1:${reg.httpPort}`;
  nc = await connect({ servers: server.url });
  const prefix = configOf(reg).prefix;
  shared = new RegistryClient(nc, { prefix });
  acme = new RegistryClient(nc, { prefix, tenant: "acme" });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
  const register = (client: RegistryClient, type: string, instance: string, extra: Record<string, unknown> = {}) =>
    client.register({ spec: spec(type, extra) as AgentSpecInput, instance_id: instance, status: "ready", heartbeat_interval_ms: LONG });
  await register(shared, "ap-billing", "b1", { version: "2.1.0", owner_team: "payments", description: "Bills customers monthly" });
  await register(shared, "ap-billing", "b2", { version: "2.1.0", owner_team: "payments", description: "Bills customers monthly" });
  await register(shared, "ap-search", "s1", { owner_team: "search", description: "Searches the product catalogue" });
  const last = await register(acme, "acme-invoices", "inv-1", { owner_team: "acme-finance", description: "Creates Acme's invoices" });
  expect(last.approval).toEqual({ state: "pending" });
  page = await browser.context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("lists every tenant's pending specs, a page at a time, and refuses a state it does not know", async () => {
  const all = (await api("approvals")).body as ApprovalsPage;
  expect(all.state).toBe("pending");
  expect(all.agents.map((a) => [a.agent_type, a.tenant_scope, a.version, a.instances, a.approval.state])).toEqual([
    ["acme-invoices", "acme", "1.0.0", 1, "pending"],
    ["ap-billing", null, "2.1.0", 2, "pending"],
    ["ap-search", null, "1.0.0", 1, "pending"],
  ]);
  const first = (await api("approvals?limit=2")).body as ApprovalsPage;
  expect(first.agents.map((a) => a.agent_type)).toEqual(["acme-invoices", "ap-billing"]);
  const second = (await api(`approvals?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`)).body as ApprovalsPage;
  expect(second.agents.map((a) => a.agent_type)).toEqual(["ap-search"]);
  expect(second.next_cursor).toBeNull();
  expect(await api("approvals?state=approved")).toEqual({ status: 400, body: { error: { code: "invalid_request", message: "state: one of pending, rejected, withheld" } } });
  expect((await api("approvals?limit=501")).status).toBe(400);
});

it("shows the pending specs, marks a pending agent in the fleet and on its page, and drops it live once approved", { timeout: 90_000 }, async () => {
  await page.goto(`${base}/ui/#/approvals`);
  await until("#approvals-summary", (t) => t === "3 specs waiting for approval", "the three pending specs");
  expect(await text(row("acme-invoices", "tenant"))).toBe("acme");
  expect(await text(row("ap-billing", "tenant"))).toBe("shared");
  expect(await text(row("ap-billing", "version"))).toBe("2.1.0");
  expect(await text(row("ap-billing", "instances"))).toBe("2 (2 ready)");
  expect(await text(row("ap-billing", "owner"))).toBe("payments");
  const revision = ((await api("approvals")).body as ApprovalsPage).agents.find((a) => a.agent_type === "ap-billing")!.revision;
  expect(await text(row("ap-billing", "command"))).toContain(`agent-registry approve ap-billing --revision ${revision} --by <you>`);
  expect(await page.locator('tr[data-agent="acme-invoices"] [data-approval="pending"]').count()).toBe(1);
  expect(await page.locator('a[data-nav="approvals"][aria-current="page"]').count()).toBe(1);
  await page.screenshot({ path: `${SCREENSHOTS}ui-approval.png` });

  // The fleet (shared agents): pending, not routed, never "ready 2 / 2".
  await page.goto(`${base}/ui/#/`);
  await until(row("ap-billing", "status"), (t) => t?.startsWith("pending approval") ?? false, "the fleet's badge");
  expect(await text(row("ap-billing", "status"))).toBe("pending approvalinstances ready, not routed");
  expect(await text(row("ap-billing", "ready"))).toBe("not routed · 2");
  // The strip counts every tenant's, acme's included, and links to the view.
  await until('[data-tile="approvals"] .tile-value', (t) => t === "3", "the strip's count");
  expect(await page.locator('[data-tile="approvals"].t-late a[href="#/approvals"]').count()).toBe(1);
  await page.screenshot({ path: `${SCREENSHOTS}ui-approval-fleet.png` });
  // The agent's page says it too, with the command that decides.
  await page.goto(`${base}/ui/#/agent/ap-billing`);
  await until("#approval-note", (t) => t?.includes("No query routes to ap-billing (its 2 instances included)") ?? false, "the agent's note");
  expect(await page.locator("#agent-facts [data-approval='pending']").count()).toBeGreaterThan(0);
  expect(await page.locator("#agent-facts .links").count()).toBe(0); // the card and tool spec are not exported yet
  await page.screenshot({ path: `${SCREENSHOTS}ui-approval-agent.png` });

  // Approved through the SDK while the approvals view is open: it leaves the list, no reload.
  await page.goto(`${base}/ui/#/approvals`);
  await until("#approvals-summary", (t) => t === "3 specs waiting for approval", "the view again");
  await page.evaluate(() => ((globalThis as unknown as { kept: boolean }).kept = true));
  await shared.approve("ap-billing", { by: "alice", revision });
  await waitFor(async () => (await page.locator('tr[data-agent="ap-billing"]').count()) === 0, { message: "ap-billing leaves the view live", timeoutMs: 15_000 });
  await until("#approvals-summary", (t) => t === "2 specs waiting for approval", "two left");
  expect(await page.evaluate(() => (globalThis as unknown as { kept?: boolean }).kept)).toBe(true);

  // And with the fleet open, approving ap-search takes its badge off live.
  await page.goto(`${base}/ui/#/`);
  await until(row("ap-search", "status"), (t) => t?.startsWith("pending approval") ?? false, "ap-search pending in the fleet");
  expect(await text(row("ap-billing", "status"))).toBe("ready");
  expect(await text(row("ap-billing", "ready"))).toBe("2 / 2");
  await page.evaluate(() => ((globalThis as unknown as { kept: boolean }).kept = true));
  await shared.approve("ap-search", { by: "alice" });
  await until(row("ap-search", "status"), (t) => t === "ready", "ap-search's badge goes, live");
  expect(await page.locator(`tr[data-agent="ap-search"] [data-approval]`).count()).toBe(0);
  expect(await text(row("ap-search", "ready"))).toBe("1 / 1");
  await until('[data-tile="approvals"] .tile-value', (t) => t === "1", "the strip counts acme's alone");
  expect(await page.evaluate(() => (globalThis as unknown as { kept?: boolean }).kept)).toBe(true);
});

it("shows a rejected spec with who rejected it and why, live", { timeout: 60_000 }, async () => {
  await page.goto(`${base}/ui/#/approvals?state=rejected`);
  await until("#approvals-summary", (t) => t === "0 rejected specs", "none rejected yet");
  await shared.reject("acme-invoices", { by: "bob", reason: "creates invoices without the ledger check" });
  await until(row("acme-invoices", "reason"), (t) => t === "creates invoices without the ledger check", "the reason, live");
  expect(await text(row("acme-invoices", "by"))).toBe("bob");
  expect(await text(row("acme-invoices", "tenant"))).toBe("acme");
  expect(await page.locator('tr[data-agent="acme-invoices"] [data-approval="rejected"]').count()).toBe(1);
  await page.screenshot({ path: `${SCREENSHOTS}ui-approval-rejected.png` });
  // No longer waiting: the pending list is empty, and says so.
  await page.selectOption("#a-state", "pending");
  await until("#approvals-summary", (t) => t === "0 specs waiting for approval", "nothing waits");
  expect(await text("table.approvals tbody td")).toBe("Nothing waits for approval.");
  await page.goto(`${base}/ui/#/`);
  await until('[data-tile="rejected"] .tile-value', (t) => t === "1", "the strip counts the rejected spec");
  expect(await text('[data-tile="approvals"] .tile-value')).toBe("0");
  expect(await page.locator('[data-tile="approvals"].t-late').count()).toBe(0);
  // The feed has the decision in words, a tenant's included.
  await page.goto(`${base}/ui/#/events`);
  const line = '#feed li[data-type="registry.agent.rejected"][data-subject="acme-invoices"] .ev-detail';
  await until(line, (t) => t === "v1.0.0 rejected by bob: creates invoices without the ledger check", "the rejection in the feed");
});
