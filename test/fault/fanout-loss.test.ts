/**
 * Memory liveness: the heard fan-out loses what a follower answered (docs/architecture.md,
 * "Scale"). Two replicas as processes under REGISTRY_LIVENESS=memory; the follower gathers its
 * fan-out for 2 s (REGISTRY_FANOUT_PERIOD_MS), longer than the 600 ms after which the evictor
 * calls an instance late, so the evictor keeps missing what the follower heard; then the
 * follower is killed with -9 holding an unsent batch. Correctness must not rest on the fan-out:
 * no live instance is evicted, no event is derived, the evictor's marks are cleared by the
 * next heartbeats, and none is left once only the survivor answers.
 */
import { expect, it } from "vitest";
import { Kvm } from "@nats-io/kv";
import { canControlNatsServers, withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec } from "../harness/registry.js";
import { livenessTestEnv, metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { watchTombstones } from "../harness/tombstones.js";
import { waitFor } from "../harness/wait.js";

const INTERVAL = 400;
const WINDOW = 3 * INTERVAL;
const N = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isLeader = async (r: RegistryProcess) => metricValue(await r.metrics().catch(() => ""), "agent_registry_evictor_leader") === 1;

it.runIf(canControlNatsServers())("a follower's lost fan-out batches, then its kill -9, evict nobody: marks are cleared, no event", async () => {
  await using server = await withNatsServer();
  const env = { ...livenessTestEnv("fl", server.url, 1500), REGISTRY_LIVENESS: "memory" };
  const replicas: RegistryProcess[] = [];
  const client = await RawClient.connect(server.url, env.REGISTRY_PREFIX);
  let beat: NodeJS.Timeout | undefined;
  let watching: { stop(): void } | undefined;
  try {
    const evictor = await spawnRegistry("fl-evictor", env);
    replicas.push(evictor);
    await waitFor(() => isLeader(evictor), { timeoutMs: 10_000, message: "the first replica takes the lease" });
    const follower = await spawnRegistry("fl-follower", { ...env, REGISTRY_FANOUT_PERIOD_MS: "2000" });
    replicas.push(follower);

    const kv = await new Kvm(client.nc).open(env.REGISTRY_BUCKET);
    const tombstones = await watchTombstones(client.nc, env.REGISTRY_BUCKET);
    watching = tombstones;

    const ids = Array.from({ length: N }, (_, i) => `f${i}`);
    for (const id of ids) expect((await client.request("register.fl-fleet", { spec: spec("fl-fleet"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
    let failed = 0;
    beat = setInterval(() => {
      for (const id of ids) client.request(`heartbeat.fl-fleet.${id}`, {}, 2000).catch(() => failed++);
    }, INTERVAL / 2);

    // Both replicas answer; what the follower answers reaches the evictor 2 s late or never.
    await sleep(3 * WINDOW);
    const marksWhileLosing = metricValue(await evictor.metrics(), "agent_registry_suspect_marks_total");
    await follower.kill();
    await sleep(3 * WINDOW);
    clearInterval(beat);
    beat = undefined;

    expect(tombstones.keys, "live instances evicted").toEqual([]);
    // The slow fan-out did cost marks (else this test exercised nothing), each cleared by a heartbeat.
    expect(marksWhileLosing).toBeGreaterThan(0);
    const marked: string[] = [];
    for (const id of ids) {
      const e = await kv.get(`instances.fl-fleet.${id}`);
      const r = e?.json<{ kind: string; suspect_since?: number }>();
      expect(r?.kind, id).toBe("instance");
      if (r?.suspect_since !== undefined) marked.push(id);
    }
    expect(marked, "marks left after the survivor answered every heartbeat for three windows").toEqual([]);
    // A mark and a clear derive nothing: the stream holds the registrations alone.
    const events = await readStoredEvents(client.nc, env.REGISTRY_EVENTS_STREAM);
    const registration = (e: { event: { type: string; data: { change?: string } } }) =>
      e.event.type === "registry.agent.registered" || (e.event.type === "registry.capability.changed" && e.event.data.change === "added");
    expect(events.filter((e) => !registration(e)).map((e) => e.event.type)).toEqual([]);
    expect(metricValue(await evictor.metrics(), "agent_registry_evictions_total")).toBe(0);
    console.log(`fan-out loss: ${marksWhileLosing} marks while the follower's fan-out lagged, ${failed} heartbeats lost with the follower`);
  } finally {
    if (beat) clearInterval(beat);
    watching?.stop();
    await client.close();
    await Promise.allSettled(replicas.map((r) => r.stop()));
  }
});
