/**
 * `agent-registry serve` as a process: the embedded nats-server of the quick start, readiness,
 * and a graceful shutdown on SIGTERM that hands the evictor lease over at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { pickFreePort } from "../harness/ports.js";
import { RawClient, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it("starts an embedded nats-server with JetStream, serves, and shuts down cleanly on SIGTERM", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "registry-data-"));
  dirs.push(dataDir);
  const port = await pickFreePort();
  const url = `nats://127.0.0.1:${port}`;
  const env = { NATS_URL: url, REGISTRY_EMBEDDED: "always", REGISTRY_DATA_DIR: dataDir, REGISTRY_LEASE_MS: "1000", REGISTRY_PREFIX: "emb.registry" };
  const a = await spawnRegistry("emb-a", env);
  const c = await RawClient.connect(url, "emb.registry");
  try {
    expect(a.logs.some((l) => /started an embedded nats-server with JetStream/.test(l))).toBe(true);
    const r = await c.request("register.embedded", { spec: spec("embedded") });
    expect(r.ok).toBe(true);
    const metrics = await a.metrics();
    expect(metricValue(metrics, "agent_registry_nats_connected")).toBe(1);
    await waitFor(async () => metricValue(await a.metrics(), "agent_registry_evictor_leader") === 1, { message: "leader" });
    await c.close();
    const stopFrom = a.logs.length;
    await a.stop();
    expect(await a.exited).toBe(0);
    expect(a.logs.some((l) => /"msg":"stopped"/.test(l))).toBe(true);
    // A clean stop is quiet: nothing at warn or above (the lease's connection closing once said
    // its renewals would fail until it was back).
    const loud = a.logs.slice(stopFrom).filter((l) => l.startsWith("{") && (JSON.parse(l) as { level: number }).level >= 40);
    expect(loud).toEqual([]);
    // The embedded server went with it: nothing answers on its port any more.
    await expect(RawClient.connect(url, "x").then((x) => x.close())).rejects.toThrow();
  } finally {
    await a.stop();
  }
});

it("stops at once, exit 0, on one SIGTERM while it is still waiting for NATS, and says at info level why it waits", async () => {
  const url = `nats://127.0.0.1:${await pickFreePort()}`; // nothing listens there
  const a = await spawnRegistry("no-nats", { NATS_URL: url, REGISTRY_EMBEDDED: "never" }, { waitReady: false });
  try {
    const retries = () => a.logs.map((l) => JSON.parse(l) as { level: number; msg: string; servers?: string }).filter((l) => l.msg.startsWith("cannot connect to NATS yet"));
    await waitFor(() => retries().length >= 2, { timeoutMs: 20_000, message: "two failed connection attempts logged" });
    expect(retries().every((l) => l.level === 30 && l.servers === url)).toBe(true);
    expect(await a.ready()).toBe(false);
    const sentAt = Date.now();
    process.kill(a.pid, "SIGTERM");
    const code = await Promise.race([a.exited, new Promise((r) => setTimeout(() => r("still running"), 15_000))]);
    expect(code).toBe(0);
    expect(Date.now() - sentAt).toBeLessThan(15_000);
    expect(a.logs.some((l) => /"msg":"stopped"/.test(l))).toBe(true);
  } finally {
    await a.kill();
  }
});

it("refuses a bad configuration with a message naming the variable", async () => {
  await expect(spawnRegistry("bad", { REGISTRY_MISSED_HEARTBEATS: "zero" })).rejects.toThrow(/REGISTRY_MISSED_HEARTBEATS/);
});
