/**
 * Every event type readable on the page, in a real browser (Debian's Chromium through
 * playwright-core): an event of a type the page was not built with (here an alert a newer
 * replica could publish) reaches the event feed live and reads as a line of words, as the
 * protocol's own types do, never as JSON. Screenshots go to .ci/out/.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { launchChromium, type TestBrowser } from "../harness/browser.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const OUT = new URL("../../.ci/out/", import.meta.url).pathname;
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let client: RegistryClient;
let browser: TestBrowser;
let page: Page;
let base: string;

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  execFileSync(process.execPath, ["src/ui/build-page.mjs"], { stdio: "pipe" });
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
