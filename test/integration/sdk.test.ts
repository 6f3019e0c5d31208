/**
 * The SDK against a real registry replica (short heartbeats): an agent handle kept alive,
 * evicted during a partition and back by itself, draining, leaving; the coordinator's
 * capability cache following events and riding out a registry restart; event replay.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import {
  connect,
  createCapabilityCache,
  registerAgent,
  RegistryClient,
  watchEvents,
  type AgentEvent,
  type AgentSpecInput,
  type WatchedEvent,
} from "../../src/client/index.js";
import { configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsServerHandle;
let registry: TestRegistry;
let agentNc: NatsConnection;
let nc: NatsConnection;
let client: RegistryClient;
let prefix: string;
let stream: string;

beforeAll(async () => {
  server = await startNatsServer({ jetstream: true });
  registry = await startRegistry(server.url, { minHeartbeatIntervalMs: 100 });
  ({ prefix, eventsStream: stream } = configOf(registry));
  agentNc = await connect({ servers: server.url, overrides: { reconnectTimeWait: 100 } });
  nc = await connect({ servers: server.url, overrides: { reconnectTimeWait: 100 } });
  client = new RegistryClient(nc, { prefix });
});

afterAll(async () => {
  await agentNc?.close();
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

const agentSpec = (agentType: string, overrides: Record<string, unknown> = {}) => spec(agentType, overrides) as AgentSpecInput;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stored = async (agentType: string, type: string) =>
  (await readStoredEvents(nc, stream)).filter((e) => e.event.type === type && e.event.data.agent_type === agentType).map((e) => e.event.data);

/**
 * The agent's connection as the SDK sees it, with a switch that cuts its requests off, as a
 * network partition between the agent and the registry would (the registry keeps running).
 */
function partitionable(conn: NatsConnection): { nc: NatsConnection; cut: (on: boolean) => void } {
  let cut = false;
  const proxy = new Proxy(conn, {
    get(target, prop) {
      if (prop === "request") {
        return (...args: Parameters<NatsConnection["request"]>) => (cut ? Promise.reject(new Error("partitioned (test)")) : target.request(...args));
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { nc: proxy, cut: (on) => (cut = on) };
}

describe("registerAgent against the registry", () => {
  it("stays registered across several eviction windows on its heartbeats", async () => {
    const events: AgentEvent[] = [];
    const handle = await registerAgent(agentNc, agentSpec("keeper"), { prefix, heartbeatIntervalMs: 100, onEvent: (e) => events.push(e) });
    expect(handle.registration).toMatchObject({ agent_type: "keeper", heartbeat_interval_ms: 100, evict_after_ms: 300, status: "ready" });
    const first = (await client.get("keeper", { minRevision: handle.registration.revision })).agent.instances[0]!;

    await sleep(5 * handle.registration.evict_after_ms);

    const { agent } = await client.get("keeper");
    expect(agent.status).toBe("ready");
    expect(agent.instances.map((i) => i.instance_id)).toEqual([handle.instanceId]);
    expect(Date.parse(agent.instances[0]!.last_heartbeat)).toBeGreaterThan(Date.parse(first.last_heartbeat));
    expect(events.map((e) => e.type)).toEqual(["registered"]);
    expect(await stored("keeper", "registry.agent.deregistered")).toEqual([]);
    await handle.close();
  });

  it("registers again by itself once the registry evicted it during a partition", async () => {
    const link = partitionable(agentNc);
    const events: AgentEvent[] = [];
    const handle = await registerAgent(link.nc, agentSpec("partitioned"), { prefix, heartbeatIntervalMs: 100, onEvent: (e) => events.push(e) });
    const instanceId = handle.instanceId;

    link.cut(true);
    await waitFor(async () => (await stored("partitioned", "registry.agent.deregistered")).length === 1, { message: "eviction", timeoutMs: 5000 });
    expect((await stored("partitioned", "registry.agent.deregistered"))[0]).toMatchObject({ instance_id: instanceId, reason: "evicted", agent_removed: true });
    expect((await client.get("partitioned")).agent.status).toBe("deregistered");
    expect(events.some((e) => e.type === "heartbeat_failed")).toBe(true);

    link.cut(false);
    await waitFor(() => events.some((e) => e.type === "reregistered"), { message: "registered again" });
    expect(events.find((e) => e.type === "reregistered")).toMatchObject({ reason: "unknown_instance", reply: { instance_id: instanceId } });
    await waitFor(async () => (await client.get("partitioned")).agent.status === "ready", { message: "ready again" });
    expect((await client.get("partitioned")).agent.instances.map((i) => i.instance_id)).toEqual([instanceId]);
    expect((await stored("partitioned", "registry.agent.registered")).map((d) => d.instance_id)).toEqual([instanceId, instanceId]);
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    await handle.close();
  });

  it("drains: the status shows in get, leaves lookups, and a status_changed event is stored", async () => {
    const handle = await registerAgent(agentNc, agentSpec("drainer"), { prefix, heartbeatIntervalMs: 100 });
    // Read our own write: the registration's revision, or the view may not have applied it yet.
    const providers = await client.lookup("drainer.run", { minRevision: handle.registration.revision });
    expect(providers.providers.map((p) => p.agent_type)).toEqual(["drainer"]);
    handle.setActiveTasks(2);
    await handle.setStatus("draining");
    await waitFor(async () => (await client.get("drainer")).agent.instances[0]?.status === "draining", { message: "draining in get" });
    const { agent } = await client.get("drainer");
    expect(agent.status).toBe("draining");
    expect(agent.instances[0]).toMatchObject({ instance_id: handle.instanceId, active_tasks: 2 });
    expect((await client.lookup("drainer.run")).providers).toEqual([]);
    await waitFor(async () => (await stored("drainer", "registry.agent.status_changed")).length === 1, { message: "status_changed stored" });
    expect((await stored("drainer", "registry.agent.status_changed"))[0]).toMatchObject({ instance_id: handle.instanceId, from: "ready", to: "draining" });
    await handle.close();
  });

  it("close() deregisters at once, with a graceful event", async () => {
    const handle = await registerAgent(agentNc, agentSpec("leaver"), { prefix, heartbeatIntervalMs: 100 });
    const deregistered: AgentEvent[] = [];
    handle.on("deregistered", (e) => deregistered.push(e));
    await handle.close();
    await handle.closed;
    expect(deregistered).toMatchObject([{ type: "deregistered", reply: { agent_type: "leaver", instance_id: handle.instanceId, agent_removed: true } }]);
    // The reply's revision lets a reader on another replica (or a lagging view) read this write.
    const revision = deregistered[0]?.type === "deregistered" ? deregistered[0].reply?.revision : undefined;
    const { agent } = await client.get("leaver", { minRevision: revision });
    expect(agent.status).toBe("deregistered");
    expect(agent.instances).toEqual([]);
    await waitFor(async () => (await stored("leaver", "registry.agent.deregistered")).length === 1, { message: "event stored" });
    expect((await stored("leaver", "registry.agent.deregistered"))[0]).toMatchObject({ instance_id: handle.instanceId, reason: "graceful" });
  });
});

describe("CapabilityCache against the registry", () => {
  it("sees a new provider from the capability.changed event, long before its resync", async () => {
    const cache = await createCapabilityCache(nc, { prefix, resyncMs: 600_000 });
    expect(cache.lookup("cache.fresh").value).toBeUndefined();
    const started = Date.now();
    const handle = await registerAgent(agentNc, agentSpec("fresh", { capabilities: [{ name: "cache.fresh", description: "d", input_schema: {}, output_schema: {} }] }), {
      prefix,
      heartbeatIntervalMs: 100,
    });
    await waitFor(() => cache.lookup("cache.fresh").value !== undefined, { message: "cache updated by the event" });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(cache.lookup("cache.fresh")).toMatchObject({ value: { providers: ["fresh"] }, stale: false });

    await handle.close();
    await waitFor(() => cache.lookup("cache.fresh").value === undefined, { message: "provider gone from the cache" });
    await cache.close();
  });

  it("answers stale while the registry is down, and fresh again from a new replica", async () => {
    // A replica of its own: the others in this file must not see this one stop.
    const first = await startRegistry(server.url, { minHeartbeatIntervalMs: 100 });
    const config = configOf(first);
    const events: AgentEvent[] = [];
    const handle = await registerAgent(agentNc, agentSpec("survivor"), { prefix: config.prefix, heartbeatIntervalMs: 100, onEvent: (e) => events.push(e) });
    const changes: number[] = [];
    // The registration is answered before the replica's view applies it (CI saw the cache's
    // first load without the provider): wait for the view, as a coordinator knowing the
    // revision would, so the first load is the only change.
    await new RegistryClient(nc, { prefix: config.prefix }).lookup("survivor.run", { minRevision: handle.registration.revision });
    const cache = await createCapabilityCache(nc, { prefix: config.prefix, resyncMs: 100, onChange: (_c, revision) => changes.push(revision) });
    const before = cache.lookup("survivor.run");
    expect(before).toMatchObject({ stale: false, value: { providers: ["survivor"] } });

    await first.stop();
    await waitFor(() => cache.lookup("survivor.run").stale, { message: "stale after the stop" });
    const during = cache.lookup("survivor.run");
    expect(during.value).toEqual(before.value);
    expect(during.revision).toBe(before.revision);

    const second = await startRegistry(server.url, {}, config);
    try {
      await waitFor(() => !cache.lookup("survivor.run").stale, { message: "fresh again" });
      expect(cache.lookup("survivor.run").value?.providers).toEqual(["survivor"]);
      // The outage evicted nobody: the same instance is still there, never registered again.
      const view = new RegistryClient(nc, { prefix: config.prefix });
      await sleep(2 * handle.registration.evict_after_ms);
      expect((await view.get("survivor")).agent.instances.map((i) => i.instance_id)).toEqual([handle.instanceId]);
      expect(events.some((e) => e.type === "reregistered" && e.reason === "unknown_instance")).toBe(false);
      // The revision moved on (lease renewals, the restart), the projection did not: one change, the first load.
      expect(cache.lookup("survivor.run").revision).toBeGreaterThan(before.revision);
      expect(changes).toEqual([before.revision]);
      await handle.close();
    } finally {
      await cache.close();
      await second.stop();
    }
  });
});

describe("watchEvents against the registry", () => {
  const take = async (iter: AsyncGenerator<WatchedEvent>, n: number): Promise<WatchedEvent[]> => {
    const out: WatchedEvent[] = [];
    for await (const e of iter) {
      out.push(e);
      if (out.length === n) break;
    }
    return out;
  };

  it("replays from a sequence number, then follows live events", async () => {
    const handle = await registerAgent(agentNc, agentSpec("watched"), { prefix, heartbeatIntervalMs: 100 });
    // Both events of the registration stored (the capability's after the agent's), so the live
    // event below is the status change and not a late capability.changed of the registration.
    await waitFor(async () => {
      const events = await readStoredEvents(nc, stream);
      return events.some((e) => e.event.type === "registry.agent.registered" && e.event.data.agent_type === "watched") && events.some((e) => e.event.type === "registry.capability.changed" && e.event.subject === "watched.run");
    }, { message: "the registration's events stored" });
    const all = await readStoredEvents(nc, stream);
    const from = all.find((e) => e.event.type === "registry.agent.registered" && e.event.data.agent_type === "watched")!.seq;

    const iter = watchEvents(nc, { prefix, stream, since: from });
    const replay = await iter.next();
    expect(replay.done ? undefined : replay.value).toMatchObject({ seq: from, event: { type: "registry.agent.registered", subject: "watched" } });
    const upTo = (await readStoredEvents(nc, stream)).at(-1)!.seq;
    for (let seq = from + 1; seq <= upTo; seq++) expect((await iter.next()).value).toMatchObject({ seq });

    // Live: a transition that happens now arrives next, in store order.
    await handle.setStatus("draining");
    const live = await iter.next();
    expect(live.done ? undefined : live.value.event).toMatchObject({
      type: "registry.agent.status_changed",
      data: { agent_type: "watched", from: "ready", to: "draining" },
    });
    await iter.return();
    await handle.close();
  });

  it('replays the last hour with since: "1h", filtered by agent type and event type', async () => {
    const handle = await registerAgent(agentNc, agentSpec("historic"), { prefix, heartbeatIntervalMs: 100 });
    await handle.close();
    const forAgent = await take(watchEvents(nc, { prefix, stream, since: "1h", agentType: "historic" }), 2);
    expect(forAgent.map((e) => [e.event.type, e.event.data])).toMatchObject([
      ["registry.agent.registered", { agent_type: "historic", instance_id: handle.instanceId, first_instance: true }],
      ["registry.agent.deregistered", { agent_type: "historic", instance_id: handle.instanceId, reason: "graceful" }],
    ]);
    const removals = await take(watchEvents(nc, { prefix, stream, since: "1h", agentType: "historic", types: ["agent.deregistered"] }), 1);
    expect(removals[0]?.seq).toBe(forAgent[1]?.seq);
    expect(Date.now() - Date.parse(removals[0]!.event.time)).toBeLessThan(3_600_000);
  });
});
