/**
 * The dependency graph in a real browser (Debian's Chromium through playwright-core): drawn
 * around an agent and for the whole fleet and a tenant, nodes coloured by state with missing
 * and deregistered dependencies plain, a click on a node opening that agent, a dependency lost
 * at runtime redrawn live, and the same data as a table one click away. Screenshots go to
 * .ci/out/.
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

const OUT = SCREENSHOTS;
const LONG = 600_000;
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let client: RegistryClient;
let browser: TestBrowser;
let page: Page;
let base: string;

const dep = (name: string) => ({ type: "agent" as const, name, version: "1.0.0" });

beforeAll(async () => {
  buildWebPage();
  browser = await launchChromium();
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  base = `http://127.0.0.1:${reg.httpPort}`;
  nc = await connect({ servers: server.url });
  client = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
  const ready = { status: "ready" as const, heartbeat_interval_ms: LONG };
  await client.register({ spec: spec("gr-db") as any, instance_id: "db1", ...ready });
  await client.register({ spec: spec("gr-old") as any, instance_id: "o1", ...ready });
  // gr-api needs gr-db and gr-cache, which no one provides: a missing dependency, allowed with a warning.
  await client.register({ spec: spec("gr-api", { depends: [dep("gr-db"), dep("gr-cache")] }) as any, instance_id: "api1", ...ready });
  await client.register({ spec: spec("gr-web", { depends: [dep("gr-api"), dep("gr-old")] }) as any, instance_id: "web1", ...ready });
  await client.deregister("gr-old", "o1");
  const acme = new RegistryClient(nc, { prefix: configOf(reg).prefix, tenant: "acme" });
  const last = await acme.register({ spec: spec("gr-acme", { depends: [dep("gr-db")] }) as any, instance_id: "t1", ...ready });
  // The page's first graph is read without min_revision and only later events redraw it: open it
  // once the registry's view holds every write above (gr-old's deregistration among them).
  await client.get("gr-web", { minRevision: last.revision });
  page = await browser.context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

const shot = (name: string) => page.screenshot({ path: `${OUT}ui-${name}.png`, fullPage: true });
const node = (scope: string, id: string) => `${scope} g.gn[data-node="${id}"]`;

async function stateOf(selector: string): Promise<string | null> {
  const all = await page.locator(selector).evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
  return all[0] ?? null;
}

async function untilState(selector: string, want: string, message: string): Promise<void> {
  await waitFor(async () => (await stateOf(selector)) === want, { timeoutMs: 15_000, intervalMs: 100, message: `${message} (${selector})` });
}

it("draws the graph around an agent, coloured by state, missing and deregistered dependencies plain, and a lost one live", { timeout: 90_000 }, async () => {
  await page.goto(`${base}/ui/#/agent/gr-web`);
  const g = "#agent-graph";
  await untilState(node(g, "agent:gr-db@1.0.0"), "live", "gr-web's dependency, two steps down, is drawn live");
  expect(await stateOf(node(g, "agent:gr-api@1.0.0"))).toBe("live");
  expect(await stateOf(node(g, "agent:gr-cache@1.0.0"))).toBe("missing");
  expect(await stateOf(node(g, "agent:gr-old@1.0.0"))).toBe("deregistered");
  expect(await page.locator(`${g} g.gn-root`).getAttribute("data-node")).toBe("agent:gr-web@1.0.0");
  // The missing node is no link (there is no agent to open); the others are.
  expect(await page.locator(`${g} a > g.gn[data-node="agent:gr-cache@1.0.0"]`).count()).toBe(0);
  expect(await page.locator(`${g} a > g.gn[data-node="agent:gr-db@1.0.0"]`).count()).toBe(1);
  expect(await page.locator(`${g} path.ge-broken`).count()).toBe(2); // to gr-cache and to gr-old
  await shot("graph-agent");

  // gr-db goes away while the page is open: the node turns deregistered without a reload.
  await page.evaluate("window.loadedOnce = 1");
  await client.deregister("gr-db", "db1");
  await untilState(node(g, "agent:gr-db@1.0.0"), "deregistered", "the lost dependency is redrawn live");
  expect(await page.evaluate("window.loadedOnce")).toBe(1);
  await shot("graph-agent-lost");

  // The same data as a table, one click away.
  await page.click(`${g} .graph-toggle`);
  expect(await page.locator(`${g} .graph-toggle`).getAttribute("aria-pressed")).toBe("true");
  expect(await page.locator(`${g} .graph-box`).isHidden()).toBe(true);
  const rows = await page.locator(`${g} .graph-table tbody tr`).evaluateAll((trs) => trs.map((tr) => [tr.getAttribute("data-node"), tr.querySelector('[data-col="state"]')?.textContent]));
  expect(Object.fromEntries(rows)).toMatchObject({
    "agent:gr-api@1.0.0": "live",
    "agent:gr-db@1.0.0": "deregistered",
    "agent:gr-cache@1.0.0": "missing",
    "agent:gr-web@1.0.0": "live",
    "agent:gr-old@1.0.0": "deregistered",
  });
  await page.click(`${g} .graph-toggle`);

  // A click on a node opens that agent.
  await page.click(node(g, "agent:gr-api@1.0.0"));
  await waitFor(async () => (await page.evaluate("location.hash")) === "#/agent/gr-api", { message: "gr-api opened from its node" });
  await untilState(node(g, "agent:gr-web@1.0.0"), "live", "gr-api's graph has its dependent");
});

it("draws the whole fleet's graph and a tenant's, and keeps the keyboard working on the nodes", { timeout: 60_000 }, async () => {
  await page.goto(`${base}/ui/#/graph`);
  await untilState(node("#main", "agent:gr-web@1.0.0"), "live", "the fleet graph is drawn");
  expect(await page.locator('#main g.gn[data-node="agent:gr-acme@1.0.0"]').count()).toBe(0); // a tenant's agent is not shared
  await shot("graph-fleet");
  await page.fill("#g-tenant", "acme");
  await page.press("#g-tenant", "Enter");
  await untilState(node("#main", "agent:gr-acme@1.0.0"), "live", "the tenant's graph has its agent");
  expect(await page.locator("#main .graph-status").textContent()).toContain("tenant acme");
  // Nodes are links in the tab order: Enter on one opens its agent.
  await page.focus('#main a:has(g.gn[data-node="agent:gr-acme@1.0.0"])');
  await page.keyboard.press("Enter");
  await waitFor(async () => (await page.evaluate("location.hash")) === "#/agent/gr-acme", { message: "opened from the keyboard" });
  const bad = await page.request.get(`${base}/ui/api/graph?depth=99`);
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.code).toBe("invalid_request");
});
