/**
 * Every event type readable on the page, in a real browser (Debian's Chromium through
 * playwright-core): an event of a type the page was not built with (here an alert a newer
 * replica could publish) reaches the event feed live and reads as a line of words, as the
 * protocol's own types do, never as JSON; the stream, read with fetch, reconnects by itself when
 * the registry restarts and resumes after the last event it saw. Screenshots go to .ci/out/.
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { buildWebPage, launchChromium, SCREENSHOTS, type TestBrowser } from "../harness/browser.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const OUT = SCREENSHOTS;
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
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
  page = await browser.context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

it("shows an event of a type it does not know, live, as a line of words", { timeout: 60_000 }, async () => {
  await page.goto(`${base}/ui/#/events`);
  await client.register({ spec: spec("ev-known") as any, instance_id: "k1", status: "ready", heartbeat_interval_ms: 600_000 });
  await waitFor(async () => (await page.locator('#feed li[data-type="registry.agent.registered"]').count()) === 1, { message: "a known type arrives" });

  // Stored in the registry's events stream as a newer replica would store it: a type this page has no words for.
  const prefix = configOf(reg).prefix;
  const event = {
    specversion: "1.0",
    id: "capacity-1",
    source: "agent-registry",
    type: "registry.alert.capacity",
    subject: "fleet",
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    data: { used: 970, limit: 1000, tenants: ["acme", "globex"], detail: { zone: "eu" } },
  };
  await jetstream(nc).publish(`${prefix}.alert.capacity`, JSON.stringify(event));
  const line = '#feed li[data-type="registry.alert.capacity"]';
  await waitFor(async () => (await page.locator(line).count()) === 1, { timeoutMs: 10_000, message: "the unknown type arrives live" });
  const detail = (await page.locator(`${line} .ev-detail`).textContent()) ?? "";
  expect(detail).toBe("used 970, limit 1000, tenants acme, globex, detail 1 fields");
  expect(await page.locator(line).textContent()).not.toMatch(/[{}"]/);
  expect(await page.locator(line).getAttribute("title")).not.toMatch(/[{}"]/);
  await page.screenshot({ path: `${OUT}ui-events-unknown-type.png` });
});

it("reconnects when the registry restarts, and resumes after the last event it saw", { timeout: 60_000 }, async () => {
  await page.goto(`${base}/ui/#/events`);
  await waitFor(async () => (await page.locator("#live").textContent()) === "live", { message: "the stream is open" });
  const before = await page.locator("#feed li").count();
  expect(before).toBeGreaterThan(0);
  const config = configOf(reg);
  const port = reg.httpPort!;
  await reg.stop();
  await waitFor(async () => (await page.locator("#live").textContent()) === "reconnecting…", { message: "the page says it lost the stream" });
  // The same replica again, on the same port, bucket and stream.
  reg = await startRegistry(server.url, {}, { ...config, httpPort: port });
  await waitFor(() => reg.isEvictor, { message: "the restarted replica publishes events" });
  await waitFor(async () => (await page.locator("#live").textContent()) === "live", { timeoutMs: 15_000, message: "the page reconnected" });
  await client.register({ spec: spec("ev-after") as any, instance_id: "a1", status: "ready", heartbeat_interval_ms: 600_000 });
  await waitFor(async () => (await page.locator('#feed li[data-subject="ev-after"]').count()) > 0, { timeoutMs: 10_000, message: "an event after the restart arrives" });
  // Resumed after the last event seen: nothing seen before came again.
  const seqs = await page.locator("#feed li[data-seq]").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-seq")));
  expect(new Set(seqs).size).toBe(seqs.length);
});
