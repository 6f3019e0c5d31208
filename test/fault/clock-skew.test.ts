/**
 * Clock skew between replicas (issue 14, finding 4). Two replicas run as processes on one
 * nats-server; one of them runs on a clock 60 s off (libfaketime), behind and then ahead, once
 * as the evicting replica and once as a follower. Heartbeats reach both replicas (the queue
 * group picks one per message), so `last_heartbeat` is stamped by either clock. Deadlines
 * must never compare the two clocks: no live instance is evicted, and every stopped instance
 * is evicted one window after its last heartbeat, whichever replica took that heartbeat.
 */
import { describe, expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec } from "../harness/registry.js";
import { livenessTestEnv, metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { canSkewClocks, offsetMs, skewedClockEnv } from "../harness/skewed-clock.js";
import { watchTombstones } from "../harness/tombstones.js";
import { waitFor } from "../harness/wait.js";

const INTERVAL = 400;
const WINDOW = 3 * INTERVAL;
const LEASE_MS = 1500;
const LIVE = 12;
/** Stopped instances: half stop right after a heartbeat the skewed replica took, half after one the other took. */
const STOPPED = 6;
/** Generous: a stopped instance evicted later than this after its last heartbeat counts as late (the bug made it 60 s). */
const LATE_AFTER_MS = WINDOW + 1000 + 3000;

type Role = "evictor" | "follower";
type Case = { offset: "-60s" | "+60s"; skewed: Role };
const CASES: Case[] = [
  { offset: "-60s", skewed: "follower" },
  { offset: "-60s", skewed: "evictor" },
  { offset: "+60s", skewed: "follower" },
  { offset: "+60s", skewed: "evictor" },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isLeader = async (r: RegistryProcess) => metricValue(await r.metrics().catch(() => ""), "agent_registry_evictor_leader") === 1;

describe.runIf(canSkewClocks())("clock skew between replicas", () => {
  let run = 0;
  for (const c of CASES) {
    it(`a replica ${c.offset.slice(1)} ${c.offset.startsWith("-") ? "behind" : "ahead"} as the ${c.skewed}: no live instance evicted, no stopped one late`, async () => {
      run++;
      const tag = `cs${run}`;
      await using server = await withNatsServer();
      const env = livenessTestEnv(tag, server.url, LEASE_MS);
      const skewMs = offsetMs(c.offset);
      // The first replica up takes the evictor lease; the second stays a follower.
      const spawnAs = (role: Role) => (c.skewed === role ? spawnRegistry("skewed", { ...env, ...skewedClockEnv(c.offset) }) : spawnRegistry("plain", env));
      const replicas: RegistryProcess[] = [];
      const client = await RawClient.connect(server.url, env.REGISTRY_PREFIX);
      const beating = new Set<string>();
      let beat: NodeJS.Timeout | undefined;
      let watching: { stop(): void } | undefined;
      try {
        const evictor = await spawnAs("evictor");
        replicas.push(evictor);
        await waitFor(() => isLeader(evictor), { timeoutMs: 10_000, message: "the first replica takes the lease" });
        const follower = await spawnAs("follower");
        replicas.push(follower);
        const skewed = c.skewed === "evictor" ? evictor : follower;

        // Every tombstone, timed on this process's clock as it arrives.
        const tombstones = await watchTombstones(client.nc, env.REGISTRY_BUCKET);
        watching = tombstones;
        const gone = tombstones.first;

        const live = Array.from({ length: LIVE }, (_, i) => `l${i}`);
        const stopping = Array.from({ length: STOPPED }, (_, i) => `s${i}`);
        for (const id of live) expect((await client.request("register.skew-live", { spec: spec("skew-live"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
        for (const id of stopping) expect((await client.request("register.skew-stopped", { spec: spec("skew-stopped"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
        const typeOf = (id: string) => (id.startsWith("l") ? "skew-live" : "skew-stopped");
        for (const id of [...live, ...stopping]) beating.add(id);
        beat = setInterval(() => {
          for (const id of beating) client.nc.publish(`${env.REGISTRY_PREFIX}.heartbeat.${typeOf(id)}.${id}`, "{}");
        }, INTERVAL / 3);
        await sleep(2 * WINDOW);

        // Each stopping instance heartbeats by request until the replica it is meant to stop
        // after took the heartbeat (told by the stamp: the skewed one is 60 s off), then stops.
        const lastBeat = new Map<string, { at: number; by: "skewed" | "plain" }>();
        for (const [k, id] of stopping.entries()) {
          const want = k % 2 === 0 ? "skewed" : "plain";
          beating.delete(id);
          for (let attempt = 1; ; attempt++) {
            const r = await client.request(`heartbeat.skew-stopped.${id}`, {}, 3000);
            const at = Date.now();
            expect(r.ok, JSON.stringify(r.body)).toBe(true);
            // The reply carries the answering replica's stamp: under memory liveness the stored record has none.
            const stamp = Date.parse(r.body.last_heartbeat);
            const by = Math.abs(stamp - at - skewMs) < Math.abs(stamp - at) ? "skewed" : "plain";
            if (by === want) {
              lastBeat.set(id, { at, by });
              break;
            }
            expect(attempt, `a heartbeat of ${id} taken by the ${want} replica`).toBeLessThan(60);
            await sleep(INTERVAL / 3);
          }
        }

        const key = (id: string) => `instances.skew-stopped.${id}`;
        await waitFor(() => stopping.every((id) => gone.has(key(id))), { timeoutMs: WINDOW + 15_000, message: "every stopped instance evicted" });
        const delays = stopping.map((id) => ({ id, by: lastBeat.get(id)!.by, ms: gone.get(key(id))!.seenAt - lastBeat.get(id)!.at }));
        for (const d of delays) {
          expect(gone.get(key(d.id))!.reason).toBe("evicted");
          // Not before its window (the stamp of a replica behind made it at once), not 60 s late.
          expect(d.ms, `${d.id} (last heartbeat taken by the ${d.by} replica)`).toBeGreaterThanOrEqual(WINDOW / 2);
          expect(d.ms, `${d.id} (last heartbeat taken by the ${d.by} replica)`).toBeLessThanOrEqual(LATE_AFTER_MS);
        }

        // The live ones go on heartbeating through both replicas: none is evicted.
        await sleep(3 * WINDOW);
        const falseEvictions = [...gone.keys()].filter((k) => k.startsWith("instances.skew-live."));
        expect(falseEvictions).toEqual([]);
        const got = await client.request("get", { agent_type: "skew-live" });
        expect(got.body.agent.instances).toHaveLength(LIVE);

        // The roles held: the replica meant to evict did every eviction.
        expect(metricValue(await evictor.metrics(), "agent_registry_evictions_total")).toBe(STOPPED);
        expect(metricValue(await follower.metrics(), "agent_registry_evictions_total")).toBe(0);
        await waitFor(async () => (await readStoredEvents(client.nc, env.REGISTRY_EVENTS_STREAM)).filter((e) => e.event.type === "registry.agent.deregistered").length >= STOPPED, {
          timeoutMs: 10_000,
          message: "every eviction stored as an event",
        });
        const evicted = (await readStoredEvents(client.nc, env.REGISTRY_EVENTS_STREAM)).filter((e) => e.event.type === "registry.agent.deregistered");
        expect(evicted.map((e) => e.event.data.instance_id).sort()).toEqual([...stopping].sort());

        // The evicting replica's own figure: lateness past the deadline, on its own clock.
        const lateness = evictor.logs
          .map((l) => {
            try {
              return JSON.parse(l) as { msg?: string; lateness_ms?: number };
            } catch {
              return {};
            }
          })
          .filter((l) => l.msg === "evicted")
          .map((l) => l.lateness_ms!);
        expect(lateness).toHaveLength(STOPPED);
        for (const ms of lateness) expect(ms).toBeGreaterThanOrEqual(0);
        const range = (xs: number[]) => `${Math.min(...xs)}–${Math.max(...xs)}`;
        const by = (who: string) => delays.filter((d) => d.by === who).map((d) => d.ms);
        console.log(
          `skew ${c.offset} on the ${c.skewed} (${skewed.name}): false evictions 0 of ${LIVE}; stopped evicted ${range(by("skewed"))} ms after a last heartbeat taken by the skewed replica, ` +
            `${range(by("plain"))} ms after one taken by the other (window ${WINDOW} ms); evictor lateness past its deadline ${range(lateness)} ms`,
        );
      } finally {
        if (beat) clearInterval(beat);
        watching?.stop();
        await client.close();
        for (const r of replicas) await r.stop();
      }
    });
  }
});
