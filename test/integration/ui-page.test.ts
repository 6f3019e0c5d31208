/**
 * The operator's web page in a real browser (Debian's Chromium through playwright-core): agents
 * registered, heartbeating, evicted and deregistered through the SDK, and what the fleet view,
 * the agent view and the event feed show at each step, live, without a reload. Screenshots go
 * to .ci/out/ (CI artefacts).
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { buildWebPage, launchChromium, SCREENSHOTS, type TestBrowser } from "../harness/browser.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const TOKEN = "page-test-token";
const OUT = SCREENSHOTS;
const LONG = 600_000; // heartbeat interval of the instances that must stay for the whole test
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let client: RegistryClient;
let browser: TestBrowser;
let page: Page;
let base: string;

beforeAll(async () => {
  buildWebPage();
  // Launched first: without Chromium the test fails here, before anything else starts.
  browser = await launchChromium();
  server = await withNatsServer();
  reg = await startRegistry(server.url, { uiToken: TOKEN });
  base = `http://127.0.0.1:${reg.httpPort}`;
  nc = await connect({ servers: server.url });
  client = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await waitFor(() => reg.isEvictor, { message: "the replica evicts and publishes events" });
  page = await browser.context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

const shot = (name: string) => page.screenshot({ path: `${OUT}ui-${name}.png`, fullPage: true });

/** The text of the first element matching `selector` now, or null when there is none (never waits: rows are redrawn live). */
async function text(selector: string): Promise<string | null> {
  const all = await page.locator(selector).allTextContents();
  return all.length > 0 ? (all[0] ?? "").trim() : null;
}

async function until(selector: string, want: (t: string | null) => boolean, message: string, timeoutMs = 10_000): Promise<void> {
  if (process.env["UI_TEST_TRACE"]) console.log(new Date().toISOString(), message);
  await waitFor(async () => want(await text(selector)), { timeoutMs, intervalMs: 100, message: `${message} (${selector})` });
}

const row = (agentType: string, col: string) => `tr[data-agent="${agentType}"] td[data-col="${col}"]`;

it("asks for the token, then shows the fleet live: registrations, heartbeats, an eviction, a deregistration", { timeout: 120_000 }, async () => {
  // Without the token: 401 with a basic-auth challenge (a person's browser asks for the token).
  const refused = await page.request.get(`${base}/ui/`, { headers: { Accept: "text/html" } });
  expect(refused.status()).toBe(401);
  expect(refused.headers()["www-authenticate"]).toContain("Basic");
  expect(await refused.text()).toContain("requires a token");

  await page.goto(`${base}/ui/?token=${TOKEN}`);
  expect(new URL(page.url()).search).toBe(""); // the token left the address bar for a cookie
  await until("#fleet-summary", (t) => t !== null && t.startsWith("Page 1"), "the fleet view loaded");
  // Page code runs in the browser: given as text, since the tests' tsconfig has no DOM types.
  await page.evaluate("window.loadedOnce = 1");

  await client.register({ spec: spec("pg-alpha", { display_name: "Alpha translator" }) as any, instance_id: "a1", status: "ready", heartbeat_interval_ms: LONG });
  await client.register({ spec: spec("pg-alpha", { display_name: "Alpha translator" }) as any, instance_id: "a2", status: "registered", heartbeat_interval_ms: LONG });
  await client.register({ spec: spec("pg-gamma", { owner_team: "team-g" }) as any, instance_id: "g1", status: "ready", heartbeat_interval_ms: LONG });
  await until(row("pg-alpha", "ready"), (t) => t === "1 / 2", "pg-alpha appears with 1 of 2 instances ready");
  await until(row("pg-gamma", "owner"), (t) => t === "team-g", "pg-gamma appears with its owner");
  expect(await text(row("pg-alpha", "status"))).toBe("ready");
  expect(await text(row("pg-alpha", "kind"))).toBe("agent");
  expect(await text(row("pg-alpha", "version"))).toBe("1.0.0");
  expect(await text(row("pg-alpha", "tenant"))).toBe("shared");
  expect(await text(row("pg-alpha", "heartbeat"))).toMatch(/ago$/);
  await shot("fleet-registered");

  // A heartbeat that changes status is a stored event: the row follows within the deadline.
  await client.heartbeat("pg-alpha", "a2", { status: "ready" });
  await until(row("pg-alpha", "ready"), (t) => t === "2 / 2", "pg-alpha's second instance turns ready");
  await client.heartbeat("pg-gamma", "g1", { status: "draining" });
  await until(row("pg-gamma", "status"), (t) => t === "draining", "pg-gamma goes draining");

  // pg-beta stops heartbeating: evicted after 3 intervals of 200 ms, and it leaves the live list.
  await client.register({ spec: spec("pg-beta") as any, instance_id: "b1", status: "ready", heartbeat_interval_ms: 200 });
  await until(row("pg-beta", "status"), (t) => t === "ready", "pg-beta appears");
  await until(row("pg-beta", "status"), (t) => t === null, "pg-beta is evicted and leaves the live fleet", 15_000);

  await client.deregister("pg-gamma", "g1");
  await until(row("pg-gamma", "status"), (t) => t === null, "pg-gamma is deregistered and leaves the live fleet");

  await page.selectOption("#f-status", "deregistered");
  await until(row("pg-beta", "status"), (t) => t === "deregistered", "pg-beta is listed as deregistered");
  await until(row("pg-gamma", "status"), (t) => t === "deregistered", "pg-gamma is listed as deregistered");
  await shot("fleet-deregistered");
  await page.selectOption("#f-status", "");
  await until(row("pg-alpha", "ready"), (t) => t === "2 / 2", "the live fleet again");

  await page.fill("#f-search", "pg-alpha");
  await page.press("#f-search", "Enter");
  await until("#fleet-summary", (t) => t?.includes("match") ?? false, "the search answered");
  expect(await page.locator("tbody tr[data-agent]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-agent")))).toEqual(["pg-alpha"]);
  await page.fill("#f-search", "");
  await page.press("#f-search", "Enter");

  // Every change above came in live: the page was never reloaded.
  expect(await page.evaluate("window.loadedOnce")).toBe(1);
});

it("shows an agent: facts, capabilities with their schemas, instances counting down, dependents, events, no audit mirror", async () => {
  await client.register({
    spec: spec("pg-delta", {
      capabilities: [
        {
          name: "pg-delta.translate",
          description: "translates a text",
          input_schema: { type: "object", required: ["text"], properties: { text: { type: "string", description: "what to translate" }, target: { type: "string", enum: ["fr", "de"] } } },
          output_schema: { type: "object", properties: { translation: { type: "string" } } },
        },
      ],
    }) as any,
    instance_id: "d1",
    status: "ready",
    heartbeat_interval_ms: 2000,
  });
  const user = await client.register({ spec: spec("pg-user", { depends: [{ type: "agent", name: "pg-delta", version: "1.0.0" }] }) as any, instance_id: "u1", status: "ready", heartbeat_interval_ms: LONG });
  // The page's stream is pg-delta's events only: pg-user's registration never makes it read the graph
  // again, so it opens once the registry's view holds pg-user.
  await client.get("pg-user", { minRevision: user.revision });
  await page.goto(`${base}/ui/#/agent/pg-delta`);
  await until("#instances h3", (t) => t === "Instances (1)", "the agent view shows its instance");
  await until('tr[data-instance="d1"] td[data-col="deadline"]', (t) => t?.startsWith("in ") ?? false, "a countdown to the eviction deadline");
  await page.click('details[data-capability="pg-delta.translate"] summary');
  const caps = (await text("#capabilities")) ?? "";
  expect(caps).toContain("text string required — what to translate");
  expect(caps).toContain("one of \"fr\", \"de\"");
  expect(await page.getAttribute('a[href$="/agent-card.json"]', "href")).toBe("/agents/pg-delta/agent-card.json");
  expect(await page.getAttribute('a[href$="/toolspec.json"]', "href")).toBe("/agents/pg-delta/toolspec.json");
  await until("#used-by", (t) => t?.includes("pg-user") ?? false, "what depends on it, from the graph");
  expect(await text("#depends-on")).toBe("none");
  await until("#history-note", (t) => t?.startsWith("no audit mirror running") ?? false, "no audit mirror: said so");
  await until("#agent-events li[data-type='registry.agent.registered']", (t) => t?.includes("d1") ?? false, "its registration among its recent events");

  // A heartbeat moves the deadline forward (it arrives as a heartbeat event).
  const before = Number(await page.getAttribute('tr[data-instance="d1"] td[data-col="deadline"]', "data-deadline"));
  await waitFor(async () => {
    await client.heartbeat("pg-delta", "d1", { active_tasks: 3 });
    return (await text('tr[data-instance="d1"] td[data-col="tasks"]')) === "3";
  }, { message: "the heartbeat shows", intervalMs: 200 });
  expect(Number(await page.getAttribute('tr[data-instance="d1"] td[data-col="deadline"]', "data-deadline"))).toBeGreaterThan(before);
  await shot("agent");

  // It stops heartbeating: evicted, and the view says so without a reload.
  await until("#instances h3", (t) => t === "Instances (0)", "the instance is evicted", 20_000);
  await until("#agent-events li[data-type='registry.agent.deregistered']", (t) => t?.includes("evicted") ?? false, "the eviction among its events");
});

it("feeds events live, filtered by type and agent, and holds them while scrolled away", async () => {
  await page.setViewportSize({ width: 1280, height: 400 });
  await page.goto(`${base}/ui/#/events`);
  await until("#feed li[data-type='registry.agent.deregistered'][data-subject='pg-beta']", (t) => t?.includes("evicted") ?? false, "pg-beta's eviction in the recent events");
  await until("#feed li[data-type='registry.agent.deregistered'][data-subject='pg-gamma']", (t) => t?.includes("graceful") ?? false, "pg-gamma's deregistration in the recent events");

  await client.register({ spec: spec("pg-epsilon") as any, instance_id: "e1", status: "ready", heartbeat_interval_ms: LONG });
  await until("#feed li:first-child", (t) => t?.includes("pg-epsilon") ?? false, "a new registration comes in on top, live");
  await shot("events");

  await page.fill("#e-agent", "pg-alpha");
  await waitFor(async () => {
    const subjects = await page.locator("#feed li").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-subject")));
    return subjects.length > 0 && subjects.every((s) => s === "pg-alpha" || s === "pg-alpha.run");
  }, { message: "only pg-alpha's events" });
  await page.fill("#e-agent", "");
  await page.selectOption("#e-type", "registry.agent.deregistered");
  await waitFor(async () => {
    const types = await page.locator("#feed li").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-type")));
    return types.length >= 2 && types.every((t) => t === "registry.agent.deregistered");
  }, { message: "only deregistrations" });
  await page.selectOption("#e-type", "");

  // Scrolled away from the top: new events wait, counted, until asked for.
  await waitFor(async () => (await page.locator("#feed li").count()) > 12, { message: "enough lines to scroll" });
  await page.locator("#feed").evaluate((el) => (el.scrollTop = 200));
  await client.register({ spec: spec("pg-zeta") as any, instance_id: "z1", status: "ready", heartbeat_interval_ms: LONG });
  await until("#feed-held", (t) => t?.includes("new events") ?? false, "held events are counted");
  expect(await page.locator("#feed li[data-subject='pg-zeta']").count()).toBe(0);
  await page.click("#feed-held");
  await until("#feed li:first-child", (t) => t?.includes("pg-") ?? false, "the held events come in");
  expect(await page.locator("#feed li[data-subject='pg-zeta']").count()).toBeGreaterThan(0);

  // The whole fleet, gone ones included: the picture docs/ui.png is taken from.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base}/ui/#/?status=all`);
  await until(row("pg-beta", "status"), (t) => t === "deregistered", "the fleet with every status");
  // The summary strip and the three charts drawn, as an operator sees them once the page settled.
  await until('[data-tile="instances"] .tile-value', (t) => t !== null, "the summary strip");
  await waitFor(async () => (await page.locator(".chart canvas").count()) === 3, { message: "the three charts" });
  await page.screenshot({ path: `${OUT}ui-fleet-all.png` });
});

it("shows a dependency lost and restored, live and in words, in the feed and on the agent that depends on it", async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await client.register({ spec: spec("pg-dep-b") as any, instance_id: "b1", status: "ready", heartbeat_interval_ms: LONG });
  await client.register({ spec: spec("pg-dep-a", { depends: [{ type: "agent", name: "pg-dep-b", version: "1.0.0" }] }) as any, instance_id: "a1", status: "ready", heartbeat_interval_ms: LONG });
  await page.goto(`${base}/ui/?token=${TOKEN}`); // the cookie, should this test run alone
  await page.goto(`${base}/ui/#/events`);
  await until("#feed li[data-subject='pg-dep-a']", (t) => t !== null, "pg-dep-a's registration in the feed");

  // pg-dep-b goes: pg-dep-a, which depends on it, gets a dependency_lost event, shown as it is stored.
  await client.deregister("pg-dep-b", "b1");
  const lost = "#feed li[data-type='registry.agent.dependency_lost'][data-subject='pg-dep-a']";
  await until(lost, (t) => t?.includes("lost agent:pg-dep-b@1.0.0: deregistered (provided by pg-dep-b)") ?? false, "the lost dependency in words, live");
  expect(await text(`${lost} .ev-detail`)).not.toMatch(/[{}"]/);
  await page.locator(lost).scrollIntoViewIfNeeded();
  await shot("dependency-lost");
  // The type filter offers every stored type of the protocol, these among them.
  const offered = await page.locator("#e-type option").evaluateAll((os) => os.map((o) => o.getAttribute("value")));
  expect(offered).toEqual(expect.arrayContaining(["registry.agent.dependency_lost", "registry.agent.dependency_restored", "registry.alert.audit_gap"]));

  // On the agent that depends on it: the loss among its events, and the return live.
  await page.goto(`${base}/ui/#/agent/pg-dep-a`);
  await until("#agent-events li[data-type='registry.agent.dependency_lost']", (t) => t?.includes("lost agent:pg-dep-b@1.0.0") ?? false, "the loss among pg-dep-a's events");
  await until("#depends-on li[data-node='pg-dep-b']", (t) => t?.endsWith("deregistered") ?? false, "pg-dep-b deregistered under Depends on");
  await client.register({ spec: spec("pg-dep-b") as any, instance_id: "b2", status: "ready", heartbeat_interval_ms: LONG });
  await until(
    "#agent-events li[data-type='registry.agent.dependency_restored']",
    (t) => t?.includes("agent:pg-dep-b@1.0.0 is live again (provided by pg-dep-b)") ?? false,
    "the restored dependency in words, live",
  );
  // The event about pg-dep-a is what tells its view that its dependency's state moved.
  await until("#depends-on li[data-node='pg-dep-b']", (t) => t?.endsWith("live") ?? false, "pg-dep-b live again under Depends on");
  await shot("dependency-restored");
});

/** WCAG contrast ratio of two computed colours ("rgb(r, g, b)"). */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
      const x = Number(v) / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** Text and background colours the page shows, as the browser computed them. */
const COLOUR_PAIRS = `(() => {
  const bg = getComputedStyle(document.body).backgroundColor;
  // An element with no background of its own is read against the nearest one behind it (a tile's label on its tile), not as black.
  const behind = (el) => { for (let e = el; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor; if (c !== "rgba(0, 0, 0, 0)" && c !== "transparent") return c; } return bg; };
  const pair = (sel, back) => { const el = document.querySelector(sel); if (!el) return null; return [sel, getComputedStyle(el).color, back ?? behind(el)]; };
  return [pair("body", bg), pair(".muted", bg), pair("a", bg), pair(".badge.s-ready"), pair(".badge.s-deregistered"), pair("th", null), pair(".tile-label"), pair(".tile-value"), pair(".tile.t-late"), pair(".tile.t-critical"), pair(".badge.l-late"), pair(".badge.l-critical"), pair("#tz")].filter(Boolean);
})()`;

it("works with the keyboard, and its colours contrast (light and dark)", async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${base}/ui/#/?status=all`);
  await until(row("pg-beta", "status"), (t) => t === "deregistered", "the fleet");
  // The strip and the charts drawn, so their colours are checked every time, not only when they came first.
  await until('[data-tile="instances"] .tile-value', (t) => t !== null, "the summary strip");
  await waitFor(async () => (await page.locator(".chart canvas").count()) === 3, { message: "the three charts" });
  for (const [sel, fg, bg] of await page.evaluate<string[][]>(COLOUR_PAIRS)) expect(contrast(fg!, bg!), `light: ${sel}`).toBeGreaterThanOrEqual(4.5);
  // Tab from the status filter to the first agent type's link, and open it with Enter.
  await page.focus("#f-search");
  await page.keyboard.press("Tab"); // the search button
  await page.keyboard.press("Tab"); // the first agent type
  expect(await page.evaluate("document.activeElement.textContent")).toBe("pg-alpha");
  await page.keyboard.press("Enter");
  await until("#instances h3", (t) => t?.startsWith("Instances") ?? false, "the agent view, opened from the keyboard");
  expect(await page.evaluate("location.hash")).toBe("#/agent/pg-alpha");
});

it("is readable in the dark and on a phone, opened with basic auth", async () => {
  // This browser answers the basic-auth challenge, as a person would: the token as the password.
  const dark = await launchChromium({ colorScheme: "dark", viewport: { width: 390, height: 844 }, httpCredentials: { username: "operator", password: TOKEN } });
  try {
    const p = await dark.context.newPage();
    await p.goto(`${base}/ui/`);
    await waitFor(async () => (await p.locator('tr[data-agent="pg-alpha"]').count()) > 0, { message: "the fleet on a phone" });
    const bg = await p.evaluate("getComputedStyle(document.body).backgroundColor");
    expect(bg).toBe("rgb(13, 17, 23)");
    for (const [sel, fg, back] of await p.evaluate<string[][]>(COLOUR_PAIRS)) expect(contrast(fg!, back!), `dark: ${sel}`).toBeGreaterThanOrEqual(4.5);
    const overflow = await p.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0); // wide tables scroll inside their box, not the page
    await p.screenshot({ path: `${OUT}ui-phone-dark.png`, fullPage: true });
  } finally {
    await dark.close();
  }
});
