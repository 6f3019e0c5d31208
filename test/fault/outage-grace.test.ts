/**
 * A registry outage longer than the eviction window must not evict live agents (the grace
 * rule of PROTOCOL.md section 4); dead ones are evicted once the grace window has passed.
 * Specs and instances survive the restart, because the bucket is the truth, not the process.
 */
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec, startRegistry, testConfig } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const INTERVAL = 300;
const WINDOW = 3 * INTERVAL;

it("restarting after an outage longer than the eviction window evicts only the dead", async () => {
  await using server = await withNatsServer();
  const config = testConfig(server.url);
  const c = await RawClient.connect(server.url, config.prefix);
  let beat: NodeJS.Timeout | undefined;
  try {
    const first = await startRegistry(server.url, {}, config);
    await c.request("register.grace-alive", { spec: spec("grace-alive"), instance_id: "a", heartbeat_interval_ms: INTERVAL });
    const dead = await c.request("register.grace-dead", { spec: spec("grace-dead"), instance_id: "d", heartbeat_interval_ms: INTERVAL });
    expect(dead.ok).toBe(true);
    // The live agent heartbeats all along; while the registry is away, nobody answers.
    beat = setInterval(() => c.nc.publish(`${config.prefix}.heartbeat.grace-alive.a`, "{}"), INTERVAL / 2);
    await first.stop("outage");

    await new Promise((r) => setTimeout(r, WINDOW * 3));
    const startedAt = Date.now();
    await using second = await startRegistry(server.url, {}, config);
    // Both are still known after the restart: nothing was evicted while no registry ran.
    expect(second.view.get("grace-alive")?.instances.has("a")).toBe(true);
    expect(second.view.get("grace-dead")?.instances.has("d")).toBe(true);

    await waitFor(() => second.view.get("grace-dead")?.status === "deregistered", { timeoutMs: 5000, message: "dead instance evicted after grace" });
    const evictedAfter = Date.now() - startedAt;
    // Not before a full window since the new evictor started.
    expect(evictedAfter).toBeGreaterThanOrEqual(WINDOW);
    await new Promise((r) => setTimeout(r, WINDOW * 2));
    expect(second.view.get("grace-alive")?.status).toBe("ready");
    const events = await readStoredEvents(c.nc, config.eventsStream);
    const evictions = events.filter((e) => e.event.type === "registry.agent.deregistered");
    expect(evictions.map((e) => e.event.data.agent_type)).toEqual(["grace-dead"]);
    console.log(`dead instance evicted ${evictedAfter} ms after the restart (window ${WINDOW} ms)`);
  } finally {
    if (beat) clearInterval(beat);
    await c.close();
  }
});
