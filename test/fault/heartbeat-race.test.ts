/**
 * Memory liveness: a heartbeat racing its instance's eviction (docs/architecture.md, "Scale",
 * "Suspect marks"). Two replicas as processes under REGISTRY_LIVENESS=memory. 200 instances
 * heartbeat, fall silent, and each sends one last heartbeat timed from 400 ms before to 400 ms
 * after its deadline, through whichever replica the queue group picks. By then the evictor has
 * marked them all, so each of those heartbeats is a write that clears the mark, racing the
 * tombstone by compare-and-set. Whatever the order: a heartbeat answered "ok" was not evicted
 * against (its instance lives a whole window past it); one answered `unknown_instance` came
 * after its tombstone; each instance is evicted exactly once, with one stored event.
 */
import { expect, it } from "vitest";
import { canControlNatsServers, withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec } from "../harness/registry.js";
import { livenessTestEnv, metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { watchTombstones } from "../harness/tombstones.js";
import { waitFor } from "../harness/wait.js";

const INTERVAL = 600;
const WINDOW = 3 * INTERVAL;
const N = 200;
/** The last heartbeats spread over deadline - SPREAD .. deadline + SPREAD. */
const SPREAD = 400;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Outcome = { sentAt: number; repliedAt: number; code: string };

it.runIf(canControlNatsServers())("a heartbeat racing its eviction wins, or is told unknown_instance after the tombstone; one eviction each", async () => {
  await using server = await withNatsServer();
  const env = { ...livenessTestEnv("hr", server.url, 1500), REGISTRY_LIVENESS: "memory" };
  const replicas: RegistryProcess[] = [];
  const client = await RawClient.connect(server.url, env.REGISTRY_PREFIX);
  let beat: NodeJS.Timeout | undefined;
  let watching: { stop(): void } | undefined;
  try {
    replicas.push(await spawnRegistry("hr-a", env), await spawnRegistry("hr-b", env));
    await waitFor(async () => (await Promise.all(replicas.map(async (r) => metricValue(await r.metrics(), "agent_registry_evictor_leader")))).reduce((a, b) => a + b, 0) === 1, {
      timeoutMs: 10_000,
      message: "one evictor",
    });
    // Every tombstone's stamp: the evictor's clock, the same machine's as this test's.
    const tombstones = await watchTombstones(client.nc, env.REGISTRY_BUCKET);
    watching = tombstones;
    const stamp = (id: string): number => tombstones.first.get(`instances.hb-race.${id}`)!.at;

    const ids = Array.from({ length: N }, (_, i) => `r${i}`);
    for (const id of ids) expect((await client.request("register.hb-race", { spec: spec("hb-race"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
    beat = setInterval(() => {
      for (const id of ids) client.nc.publish(`${env.REGISTRY_PREFIX}.heartbeat.hb-race.${id}`, "{}");
    }, INTERVAL / 3);
    await sleep(2 * WINDOW);
    clearInterval(beat);
    beat = undefined;
    // One last heartbeat each, by request: its deadline is at most a window after it was sent.
    const last = new Map<string, number>();
    await Promise.all(
      ids.map(async (id) => {
        const sentAt = Date.now();
        expect((await client.request(`heartbeat.hb-race.${id}`, {}, 5000)).ok).toBe(true);
        last.set(id, sentAt);
      }),
    );

    // The racing heartbeat of each, from SPREAD before its deadline to SPREAD after.
    const outcomes = new Map<string, Outcome>();
    await Promise.all(
      ids.map(async (id, i) => {
        const at = last.get(id)! + WINDOW - SPREAD + (2 * SPREAD * i) / (N - 1);
        await sleep(Math.max(0, at - Date.now()));
        const sentAt = Date.now();
        const r = await client.request(`heartbeat.hb-race.${id}`, {}, 5000);
        outcomes.set(id, { sentAt, repliedAt: Date.now(), code: r.ok ? "ok" : String(r.body?.error?.code) });
      }),
    );

    // The instances answered "ok" fall silent again and are evicted a window later.
    await waitFor(() => tombstones.first.size === N, { timeoutMs: 2 * WINDOW + 15_000, message: "every instance evicted in the end" });
    const won = ids.filter((id) => outcomes.get(id)!.code === "ok");
    const lost = ids.filter((id) => outcomes.get(id)!.code === "unknown_instance");
    console.log(`heartbeat race: ${won.length} heartbeats won, ${lost.length} came after the tombstone`);
    expect(won.length + lost.length, JSON.stringify([...outcomes.values()].filter((o) => o.code !== "ok" && o.code !== "unknown_instance"))).toBe(N);
    for (const id of won) {
      // The eviction counted from this heartbeat, never from the one before it.
      expect(stamp(id), `${id}: evicted less than a window after a heartbeat answered ok`).toBeGreaterThanOrEqual(outcomes.get(id)!.sentAt + WINDOW);
    }
    for (const id of lost) {
      // Told to register again only once its tombstone was stored.
      expect(stamp(id), `${id}: told unknown_instance before its tombstone`).toBeLessThanOrEqual(outcomes.get(id)!.repliedAt);
    }
    // Both sides of the race were run (the spread straddles every deadline).
    expect(won.length).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);

    await waitFor(async () => (await readStoredEvents(client.nc, env.REGISTRY_EVENTS_STREAM)).filter((e) => e.event.type === "registry.agent.deregistered").length >= N, {
      timeoutMs: 10_000,
      message: "every eviction stored as an event",
    });
    const evicted = (await readStoredEvents(client.nc, env.REGISTRY_EVENTS_STREAM)).filter((e) => e.event.type === "registry.agent.deregistered");
    expect(evicted.map((e) => e.event.data.instance_id).sort()).toEqual([...ids].sort());
    expect(evicted.every((e) => e.event.data.reason === "evicted")).toBe(true);
    const evictions = (await Promise.all(replicas.map(async (r) => metricValue(await r.metrics(), "agent_registry_evictions_total")))).reduce((a, b) => a + b, 0);
    expect(evictions).toBe(N);
  } finally {
    if (beat) clearInterval(beat);
    watching?.stop();
    await client.close();
    await Promise.allSettled(replicas.map((r) => r.stop()));
  }
});
