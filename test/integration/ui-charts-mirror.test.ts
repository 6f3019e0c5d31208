/**
 * The charts' longer ranges in a real browser (Debian's Chromium through playwright-core), read
 * from a real audit mirror on the shared PostgreSQL: with a known fleet registered and
 * deregistered, the 24-hour range draws the rates chart from the mirror's `history_rates`, and
 * its table alternative holds exactly those counts. A screenshot goes to .ci/out/.
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { startAudit, type TestAudit } from "../harness/audit.js";
import { buildWebPage, launchChromium, SCREENSHOTS, type TestBrowser } from "../harness/browser.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { sql, type TestDatabase } from "../harness/postgres.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { waitFor } from "../harness/wait.js";

const OUT = SCREENSHOTS;
const LONG = 600_000;
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let db: TestDatabase;
let audit: TestAudit;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  buildWebPage();
  browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  nc = await connect({ servers: server.url });
  db = await withTestDatabase();
  const { prefix, eventsStream } = configOf(reg);
  audit = await startAudit({ natsUrl: server.url, databaseUrl: db.url, prefix, stream: eventsStream });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
  page = await browser.context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await audit?.stop();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
  await db?.drop();
});

async function sum(col: string): Promise<number> {
  const cells = await page.locator(`#long-rates-table td[data-col="${col}"]`).allTextContents();
  return cells.reduce((a, t) => a + Number(t), 0);
}

it("draws the last 24 hours from the audit mirror, with the same counts as a table", { timeout: 90_000 }, async () => {
  const client = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  for (const t of ["lr-a", "lr-b", "lr-c"]) await client.register({ spec: spec(t) as any, instance_id: "i1", status: "ready", heartbeat_interval_ms: LONG });
  await client.deregister("lr-b", "i1");
  await waitFor(async () => Number((await sql(db.url, "SELECT count(*) AS n FROM audit_events WHERE type = 'registry.agent.deregistered'"))[0]?.n) === 1, {
    timeoutMs: 20_000,
    message: "the deregistration mirrored",
  });
  await page.goto(`http://127.0.0.1:${reg.httpPort}/ui/#/`);
  await page.selectOption("#c-range", "24h");
  const status = page.locator("#charts .chart-empty");
  await waitFor(async () => ((await status.textContent()) ?? "").startsWith("From the audit mirror: per 15 minutes over the last 24 hours"), { timeoutMs: 15_000, message: "the mirror's range shown" });
  await waitFor(async () => (await page.locator('[data-chart="long-rates"] canvas').count()) > 0, { message: "the 24-hour chart drawn" });
  expect(await page.locator('[data-chart="long-rates"] .u-title').textContent()).toBe("Registrations, deregistrations, evictions per 15 minutes");
  await page.screenshot({ path: `${OUT}ui-charts-24h.png` });
  await page.click(".charts-toggle");
  await waitFor(async () => (await page.locator("#long-rates-table").count()) === 1, { message: "the table alternative" });
  expect(await sum("registrations")).toBe(3);
  expect(await sum("deregistrations")).toBe(1);
  expect(await sum("evictions")).toBe(0);
  // Back to the last hour: the live charts again, the mirror's range hidden.
  await page.click(".charts-toggle");
  await page.selectOption("#c-range", "1h");
  await waitFor(async () => await page.locator('[data-chart="long-rates"]').isHidden(), { message: "the longer range hidden" });
});

it("answers 400 for a range the page does not offer", async () => {
  const r = await fetch(`http://127.0.0.1:${reg.httpPort}/ui/api/rates?range=toString`);
  expect(r.status).toBe(400);
  expect(((await r.json()) as any).error.message).toContain("range: one of 24h, 7d");
});
