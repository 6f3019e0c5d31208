/**
 * Liveness at a glance, in a real browser (Debian's Chromium through playwright-core): an agent
 * killed (it stops heartbeating) turns late, then critical, then evicted, on screen, in that
 * order; the fleet's summary strip counts it, names the evicting replica, the replicas and
 * the NATS server; the evicted type keeps its real last heartbeat; absolute times switch
 * between local time and UTC, and the choice survives a reload. Short heartbeat intervals and
 * waits on the DOM, never a sleep. Screenshots go to .ci/out/.
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
const LONG = 600_000; // the heartbeat interval of instances that stay on time for the whole test
/** The dying instances' interval: late after one, critical after two, evicted after three (REGISTRY_MISSED_HEARTBEATS). */
const INTERVAL = 2500;
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
  reg = await startRegistry(server.url, { missedHeartbeats: 3 });
  base = `http://127.0.0.1:${reg.httpPort}`;
  nc = await connect({ servers: server.url });
  client = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await waitFor(() => reg.isEvictor, { message: "the replica evicts" });
  page = await browser.context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

const shot = (name: string) => page.screenshot({ path: `${OUT}ui-${name}.png`, fullPage: true });

async function text(selector: string): Promise<string | null> {
  const all = await page.locator(selector).allTextContents();
  return all.length > 0 ? (all[0] ?? "").trim() : null;
}

async function until(selector: string, want: (t: string | null) => boolean, message: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(async () => want(await text(selector)), { timeoutMs, intervalMs: 100, message: `${message} (${selector})` });
}

/** Heartbeats an instance every half interval until the returned function is called: the agent is killed. */
function keepAlive(agentType: string, instanceId: string): () => void {
  const timer = setInterval(() => void client.heartbeat(agentType, instanceId, {}).catch(() => undefined), INTERVAL / 2);
  return () => clearInterval(timer);
}

const tile = (id: string) => `[data-tile="${id}"] .tile-value`;
const liveness = (instance: string) => `tr[data-instance="${instance}"] td[data-col="liveness"]`;

it("counts a killed agent late, then critical, in the fleet's summary strip, with the evictor, replicas and NATS server", { timeout: 90_000 }, async () => {
  await page.goto(`${base}/ui/#/`);
  await client.register({ spec: spec("lv-keep") as any, instance_id: "k1", status: "ready", heartbeat_interval_ms: LONG });
  await client.register({ spec: spec("lv-strip") as any, instance_id: "s1", status: "ready", heartbeat_interval_ms: INTERVAL });
  const kill = keepAlive("lv-strip", "s1");
  await until(tile("instances"), (t) => t?.startsWith("2") ?? false, "two live instances counted");
  expect(await text(tile("evictor"))).toBe(reg.replicaName);
  expect(await text(tile("nats"))).toBe(nc.info?.version);
  expect(await text(tile("replicas"))).toMatch(/^1 \(\d+\.\d+\.\d+/);
  expect(await text(tile("eviction"))).toBe("running");
  expect(await text(tile("late"))).toBe("0");
  kill();
  await until(tile("late"), (t) => t === "1", "the killed instance is counted late");
  expect(await page.locator('[data-tile="late"]').getAttribute("class")).toContain("t-late");
  await shot("strip-late");
  await until(tile("critical"), (t) => t === "1", "then critical");
  expect(await text(tile("late"))).toBe("0");
  await until(tile("instances"), (t) => t?.startsWith("1") ?? false, "then evicted: one live instance left");
  expect(await text(tile("critical"))).toBe("0");
  expect(await text(tile("types"))).toContain("1 deregistered");
});

it("shows a killed agent's instance late, then critical, each with its countdown, then evicted with its real last heartbeat", { timeout: 90_000 }, async () => {
  await client.register({ spec: spec("lv-dying") as any, instance_id: "d1", status: "ready", heartbeat_interval_ms: INTERVAL });
  const kill = keepAlive("lv-dying", "d1");
  await page.goto(`${base}/ui/#/agent/lv-dying`);
  await until(liveness("d1"), (t) => t === "on time", "the heartbeating instance is on time");
  kill();
  await until(liveness("d1"), (t) => t === "late", "missed one heartbeat: late");
  expect(await page.locator(`${liveness("d1")} .badge`).getAttribute("class")).toContain("l-late");
  expect(await text('tr[data-instance="d1"] td[data-col="deadline"]')).toMatch(/^in \d+ s$/);
  await shot("instance-late");
  await until(liveness("d1"), (t) => t === "critical", "missed two: critical");
  expect(await text('tr[data-instance="d1"] td[data-col="deadline"]')).toMatch(/^in \d+ s$|^overdue$/);
  await shot("instance-critical");
  await until("#instances h3", (t) => t === "Instances (0)", "missed three: evicted");
  await until("#agent-facts .badge", (t) => t === "deregistered", "the agent type is deregistered");
  // Its last heartbeat is the evicted instance's, not "never".
  const heard = await text("#last-heartbeat");
  expect(heard).toMatch(/ago · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
  await until('#agent-events li[data-type="registry.agent.deregistered"] .ev-detail', (t) => t?.includes("evicted") ?? false, "the eviction is in the recent events");
  await shot("instance-evicted");

  await page.goto(`${base}/ui/#/?status=all`);
  await until('tr[data-agent="lv-dying"] td[data-col="status"]', (t) => t === "deregistered", "the fleet lists it deregistered");
  expect(await text('tr[data-agent="lv-dying"] td[data-col="heartbeat"]')).toMatch(/ago$/);
  expect(await text('tr[data-agent="lv-dying"] td[data-col="heard-at"]')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
});

it("shows absolute times in local time or UTC, and remembers the choice", async () => {
  await page.goto(`${base}/ui/#/?status=all`);
  const cell = 'tr[data-agent="lv-keep"] td[data-col="heard-at"]';
  await until(cell, (t) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(t ?? ""), "local time by default");
  expect(await page.locator("#tz").getAttribute("aria-pressed")).toBe("false");
  await page.click("#tz");
  await until(cell, (t) => t?.endsWith(" UTC") ?? false, "UTC after the toggle");
  expect(await page.locator("#tz").getAttribute("aria-pressed")).toBe("true");
  await page.reload();
  await until(cell, (t) => t?.endsWith(" UTC") ?? false, "still UTC after a reload");
  expect(await page.locator(`${cell} time`).getAttribute("title")).toMatch(/ UTC$/);
  await shot("fleet-strip");
  await page.click("#tz");
});

it("says on the summary strip when self-preservation has paused eviction", { timeout: 90_000 }, async () => {
  // A registry of its own that pauses evictions when more than half the live instances are overdue.
  const guarded = await startRegistry(server.url, { selfPreservationRatio: 0.5 });
  try {
    await waitFor(() => guarded.isEvictor, { message: "the second registry evicts" });
    const c = new RegistryClient(nc, { prefix: configOf(guarded).prefix });
    // Self-preservation counts from ten live instances: four heartbeat-free for the test's length, six that stop.
    for (let i = 0; i < 4; i++) await c.register({ spec: spec("sp-keep") as any, instance_id: `k${i}`, status: "ready", heartbeat_interval_ms: LONG });
    for (let i = 0; i < 6; i++) await c.register({ spec: spec("sp-quiet") as any, instance_id: `q${i}`, status: "ready", heartbeat_interval_ms: INTERVAL });
    await page.goto(`http://127.0.0.1:${guarded.httpPort}/ui/#/`);
    // Six of ten silent: over the ratio, so the evictor holds them and says so.
    await until(tile("eviction"), (t) => t?.startsWith("paused by self-preservation since") ?? false, "the strip says eviction is paused", 30_000);
    expect(await text(tile("eviction"))).toMatch(/\(\d+ of 10 overdue\)$/);
    expect(await page.locator('[data-tile="eviction"]').getAttribute("class")).toContain("t-critical");
    await until(tile("critical"), (t) => t === "6", "the six silent instances stay, critical, not evicted");
    expect(await text(tile("instances"))).toMatch(/^10 /);
    await shot("strip-self-preservation");
  } finally {
    await guarded.stop();
  }
});
