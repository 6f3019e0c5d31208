/**
 * The whole fleet's graph at the largest size the page draws (2,000 agent types, a tree of 1,999
 * dependencies) in a real browser: drawn by the linear-time layout (quick-layout.ts) without
 * loading elkjs's 1.5 MB script, every node once. The time from navigation to the drawn graph is
 * printed, not asserted (docs/ui.md quotes it). A screenshot goes to .ci/out/.
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
const NODES = 2000;
const name = (i: number) => `lg-${String(i).padStart(4, "0")}`;
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  buildWebPage();
  browser = await launchChromium({ viewport: { width: 1400, height: 900 } });
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  nc = await connect({ servers: server.url });
  const client = new RegistryClient(nc, { prefix: configOf(reg).prefix, timeoutMs: 30_000 });
  // A binary tree: each agent type depends on its parent. Parents first, so no dependency is
  // missing; a level at a time, in parallel within it.
  for (let first = 0; first < NODES; first = first * 2 + 1) {
    const level = Array.from({ length: Math.min(first + 1, NODES - first) }, (_, k) => first + k);
    for (let i = 0; i < level.length; i += 64) {
      await Promise.all(
        level.slice(i, i + 64).map((n) => {
          const depends = n === 0 ? [] : [{ type: "agent" as const, name: name((n - 1) >> 1), version: "1.0.0" }];
          return client.register({ spec: spec(name(n), { depends }) as any, instance_id: "i1", status: "ready", heartbeat_interval_ms: 3_600_000 });
        }),
      );
    }
  }
  page = await browser.context.newPage();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

it("draws a 2,000-node fleet graph with the quick layout, without loading elkjs (time printed)", { timeout: 120_000 }, async () => {
  const scripts: string[] = [];
  page.on("request", (r) => {
    if (r.resourceType() === "script") scripts.push(new URL(r.url()).pathname);
  });
  const started = Date.now();
  await page.goto(`http://127.0.0.1:${reg.httpPort}/ui/#/graph`);
  const drawn = () => page.locator("#main svg g.gn").count();
  await waitFor(async () => (await drawn()) === NODES, { timeoutMs: 60_000, intervalMs: 50, message: `the ${NODES} nodes drawn` });
  const ms = Date.now() - started;
  expect(await page.locator("#main svg path.ge").count()).toBe(NODES - 1);
  const ids = await page.locator("#main svg g.gn").evaluateAll((els) => els.map((e) => e.getAttribute("data-node")));
  expect(new Set(ids).size).toBe(NODES);
  expect(scripts.some((s) => s.endsWith("/layout.js"))).toBe(false);
  await page.screenshot({ path: `${OUT}ui-graph-2000.png` });
  console.log(`ui graph: ${NODES} nodes, ${NODES - 1} edges, on screen ${ms} ms after navigation (quick layout, elkjs not loaded)`);
});
