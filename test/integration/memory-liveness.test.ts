/**
 * REGISTRY_LIVENESS=memory through a real server (docs/architecture.md, "Scale: heartbeats
 * held in memory"): heartbeats cost no store write, the evicting replica hears a follower's
 * heartbeats through the fan-out, a silent instance gets a suspect mark that its next
 * heartbeat clears, and a replica holding the lease without memory liveness makes the others
 * write every heartbeat, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
beforeAll(async () => {
  server = await withNatsServer();
});
afterAll(async () => server?.stop());

const counter = async (r: TestRegistry, name: "heartbeatsFromMemory" | "suspectMarks" | "evictions" | "heardBatchesLost"): Promise<number> =>
  (await r.metrics[name].get()).values.reduce((s, v) => s + v.value, 0);

/** The stored revision of each instance, as the replica's view holds it. */
const revisions = (r: TestRegistry, type: string): Map<string, number> => new Map([...(r.view.get(type)?.instances.values() ?? [])].map((i) => [i.instance_id, i.revision]));

/** Sends a request-reply heartbeat for each id every `everyMs`, until the returned stop is called; failures are counted. */
function beat(c: RawClient, type: string, ids: string[], everyMs: number): { stop: () => void; failures: () => number; sent: () => number } {
  let failures = 0;
  let sent = 0;
  const timer = setInterval(() => {
    for (const id of ids) {
      sent++;
      c.request(`heartbeat.${type}.${id}`, { status: "ready", active_tasks: 1 }).then(
        (r) => {
          if (!r.ok) failures++;
        },
        () => failures++,
      );
    }
  }, everyMs);
  return { stop: () => clearInterval(timer), failures: () => failures, sent: () => sent };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("memory liveness", () => {
  it("answers a heartbeating fleet from memory: no instance record is written, none is marked", async () => {
    await using reg = await startRegistry(server.url, { liveness: "memory" });
    const c = await RawClient.connect(server.url, configOf(reg).prefix);
    try {
      await waitFor(() => reg.isEvictor, { message: "single replica becomes the evictor" });
      const ids = Array.from({ length: 20 }, (_, i) => `m${i}`);
      for (const id of ids) await c.request("register.ml-fleet", { spec: spec("ml-fleet"), instance_id: id, heartbeat_interval_ms: 300 });
      await waitFor(() => reg.view.get("ml-fleet")?.instances.size === ids.length, { message: "all registered in the view" });
      const before = revisions(reg, "ml-fleet");
      const b = beat(c, "ml-fleet", ids, 100);
      await sleep(2000);
      b.stop();
      await sleep(200);
      expect(b.failures()).toBe(0);
      expect(revisions(reg, "ml-fleet")).toEqual(before);
      expect(await counter(reg, "heartbeatsFromMemory")).toBeGreaterThanOrEqual(b.sent() * 0.9);
      expect(await counter(reg, "suspectMarks")).toBe(0);
      expect(await counter(reg, "evictions")).toBe(0);
      // active_tasks lives in memory: discover and lookups see it without a write.
      expect([...reg.view.get("ml-fleet")!.instances.values()].every((i) => i.active_tasks === 1)).toBe(true);
    } finally {
      await c.close();
    }
  });

  it("a silent instance is marked at 1.5 intervals; its next heartbeat clears the mark with one write, no event", async () => {
    await using reg = await startRegistry(server.url, { liveness: "memory" });
    const cfg = configOf(reg);
    const c = await RawClient.connect(server.url, cfg.prefix);
    try {
      await waitFor(() => reg.isEvictor, { message: "single replica becomes the evictor" });
      // A roomy interval: the mark must be applied and cleared well inside the 3-interval window.
      await c.request("register.ml-mark", { spec: spec("ml-mark"), instance_id: "x", heartbeat_interval_ms: 1000 });
      await waitFor(() => (reg.view.instance("ml-mark", "x")?.suspect_since ?? null) !== null, { timeoutMs: 5000, message: "the silent instance marked" });
      const marked = reg.view.instance("ml-mark", "x")!.revision;
      const reply = await c.request("heartbeat.ml-mark.x", {});
      expect(reply.ok).toBe(true);
      expect(reply.body.revision).toBeGreaterThan(marked);
      await waitFor(() => reg.view.instance("ml-mark", "x")?.suspect_since === null, { message: "the mark cleared in the view" });
      // Kept alive from memory from now on: no further mark, no eviction.
      const b = beat(c, "ml-mark", ["x"], 300);
      await sleep(3500);
      b.stop();
      expect(await counter(reg, "suspectMarks")).toBe(1);
      expect(await counter(reg, "evictions")).toBe(0);
      expect(reg.view.get("ml-mark")?.status).toBe("ready");
      const events = await readStoredEvents(c.nc, cfg.eventsStream);
      // Neither the mark nor the clear derived an event: no status change, no deregistration.
      expect(events.filter((e) => e.event.data?.agent_type === "ml-mark").map((e) => e.event.type)).toEqual(["registry.agent.registered"]);
    } finally {
      await c.close();
    }
  });

  it("two replicas: the evictor hears the heartbeats the follower answered, through the fan-out", async () => {
    const config = testConfig(server.url, { liveness: "memory" });
    await using a = await startRegistry(server.url, {}, { ...config, replicaName: "ml-a" });
    await using b = await startRegistry(server.url, {}, { ...config, replicaName: "ml-b" });
    const c = await RawClient.connect(server.url, config.prefix);
    try {
      await waitFor(() => a.isEvictor !== b.isEvictor, { message: "exactly one evictor" });
      const [evictor, follower] = a.isEvictor ? [a, b] : [b, a];
      const ids = Array.from({ length: 20 }, (_, i) => `p${i}`);
      for (const id of ids) await c.request("register.ml-pair", { spec: spec("ml-pair"), instance_id: id, heartbeat_interval_ms: 400 });
      await waitFor(() => a.view.get("ml-pair")?.instances.size === ids.length && b.view.get("ml-pair")?.instances.size === ids.length, { message: "registered on both views" });
      const before = revisions(evictor, "ml-pair");
      const h = beat(c, "ml-pair", ids, 100);
      await sleep(3000);
      h.stop();
      expect(h.failures()).toBe(0);
      // The queue group shares the heartbeats; the follower's reach the evictor only through the fan-out.
      expect(await counter(follower, "heartbeatsFromMemory")).toBeGreaterThan(0);
      expect(await counter(evictor, "heartbeatsFromMemory")).toBeGreaterThan(0);
      expect(await counter(evictor, "suspectMarks")).toBe(0);
      expect((await counter(a, "evictions")) + (await counter(b, "evictions"))).toBe(0);
      expect(revisions(evictor, "ml-pair")).toEqual(before);
    } finally {
      await c.close();
    }
  });

  it("under a lease holder without memory liveness, a memory replica writes every heartbeat", async () => {
    const config = testConfig(server.url);
    await using old = await startRegistry(server.url, {}, { ...config, replicaName: "ml-store", liveness: "store" });
    await waitFor(() => old.isEvictor, { message: "the store-liveness replica holds the lease" });
    await using fresh = await startRegistry(server.url, {}, { ...config, replicaName: "ml-memory", liveness: "memory" });
    const c = await RawClient.connect(server.url, config.prefix);
    try {
      await c.request("register.ml-mixed", { spec: spec("ml-mixed"), instance_id: "i", heartbeat_interval_ms: 400 });
      await waitFor(() => fresh.view.instance("ml-mixed", "i") !== undefined, { message: "registered on the memory replica" });
      const h = beat(c, "ml-mixed", ["i"], 100);
      await sleep(2000);
      h.stop();
      expect(h.failures()).toBe(0);
      expect(await counter(fresh, "heartbeatsFromMemory")).toBe(0);
      expect(old.isEvictor).toBe(true);
      expect(await counter(old, "evictions")).toBe(0);
      // Every heartbeat, whichever replica took it, moved the stored revision.
      expect(fresh.view.instance("ml-mixed", "i")!.revision).toBeGreaterThan(10);
    } finally {
      await c.close();
    }
  });
});
