/**
 * The fleet view's charts in a real browser (Debian's Chromium through playwright-core): for a
 * known fleet (three registrations, a deregistration, an eviction) the per-minute chart and the
 * status charts are drawn, and their table alternative holds exactly those numbers; a longer
 * range with no audit mirror shows its empty, labelled state. Screenshots go to .ci/out/.
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

beforeAll(async () => {
  buildWebPage();
  browser = await launchChromium();
  server = await withNatsServer();
  reg = await startRegistry(server.url);
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

/** The sum of a column of the rates table (minutes may straddle a minute's end). */
async function sum(col: string): Promise<number> {
  const cells = await page.locator(`#rates-table td[data-col="${col}"]`).allTextContents();
  return cells.reduce((a, t) => a + Number(t), 0);
}

it("charts a known fleet's registrations, deregistrations and evictions, and its instances and types by status, with a table alternative", { timeout: 90_000 }, async () => {
  await client.register({ spec: spec("ch-a") as any, instance_id: "a1", status: "ready", heartbeat_interval_ms: LONG });
  await client.register({ spec: spec("ch-b") as any, instance_id: "b1", status: "registered", heartbeat_interval_ms: LONG });
  await client.register({ spec: spec("ch-c") as any, instance_id: "c1", status: "ready", heartbeat_interval_ms: LONG });
  // The summary the page samples first holds the three (it is computed at most once a second).
  await waitFor(async () => ((await (await fetch(`${base}/ui/api/summary`)).json()) as { instances: { total: number } }).instances.total === 3, { message: "the summary counts the three" });
  await page.goto(`${base}/ui/#/`);
  // Events after the page opened come live; those before came from the last hour's replay.
  await client.deregister("ch-c", "c1");
  await client.register({ spec: spec("ch-gone") as any, instance_id: "g1", status: "ready", heartbeat_interval_ms: 300 });
  for (const chart of ["rates", "instances", "types"]) {
    await waitFor(async () => (await page.locator(`[data-chart="${chart}"] canvas`).count()) === 1, { message: `the ${chart} chart is drawn` });
  }
  await page.click(".charts-toggle");
  expect(await page.locator(".charts-toggle").getAttribute("aria-pressed")).toBe("true");
  await waitFor(async () => (await sum("evictions")) === 1, { timeoutMs: 15_000, intervalMs: 200, message: "the eviction is counted" });
  expect(await sum("registrations")).toBe(4);
  expect(await sum("deregistrations")).toBe(2);
  // The counts are sampled from the summary, read every 2 s and after events: they catch up.
  const counts = async () => Object.fromEntries(await page.locator("#counts-table td[data-col]").evaluateAll((tds) => tds.map((td) => [td.getAttribute("data-col"), td.textContent])));
  await waitFor(async () => {
    const c = await counts();
    return c["instances-ready"] === "1" && c["instances-registered"] === "1" && c["types-deregistered"] === "2";
  }, { timeoutMs: 15_000, intervalMs: 200, message: "now: one instance ready, one registered, two agent types deregistered" });
  expect(await counts()).toMatchObject({ "instances-late": "0", "instances-critical": "0", "types-ready": "1", "types-registered": "1" });
  // Before the first sample: the counts rebuilt from the replayed events up to the revision the
  // sample's counts are of, oldest first the hour's start and the three registrations (the
  // changes just after navigation may be in the first sample too).
  const cols = ["instances", "ready", "registered", "types"];
  const rebuilt = await page.locator("#rebuilt-table tbody tr").evaluateAll((trs, names) => trs.map((tr) => names.map((n) => tr.querySelector(`[data-col="${n}"]`)?.textContent)), cols);
  // ch-a ready, ch-b registered, ch-c ready: by status too (protocol v1.2's status in the events).
  expect(rebuilt.reverse().slice(0, 4), JSON.stringify(rebuilt)).toEqual([
    ["0", "0", "0", "0"],
    ["1", "1", "0", "1"],
    ["2", "1", "1", "2"],
    ["3", "2", "1", "3"],
  ]);
  await page.screenshot({ path: `${OUT}ui-charts-table.png`, fullPage: true });
  await page.click(".charts-toggle");
  await page.screenshot({ path: `${OUT}ui-charts.png`, fullPage: true });

  await page.selectOption("#c-range", "24h");
  await waitFor(async () => ((await page.locator(".chart-empty").textContent()) ?? "").includes("no audit mirror running"), { message: "the longer range's empty state" });
  expect(await page.locator(".charts-row").isHidden()).toBe(true);
  await page.screenshot({ path: `${OUT}ui-charts-no-mirror.png` });
  await page.selectOption("#c-range", "1h");
  expect(await page.locator(".charts-row").isHidden()).toBe(false);
});
