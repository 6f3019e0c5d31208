/**
 * Two registry replicas as separate processes; the evicting one is killed with -9 during
 * churn. The survivor takes over eviction within the lease, lookups are answered throughout,
 * and the stream holds exactly one event per transition.
 */
import { expect, it } from "vitest";
import { canControlNatsServers, withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";

const LEASE_MS = 1500;

it.runIf(canControlNatsServers())("the survivor takes over when the evicting replica is killed with -9 mid-churn", async () => {
  await using server = await withNatsServer();
  const env = {
    NATS_URL: server.url,
    REGISTRY_PREFIX: "rk.registry",
    REGISTRY_BUCKET: "rk-registry",
    REGISTRY_EVENTS_STREAM: "RK_EVENTS",
    REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "100",
    REGISTRY_LEASE_MS: String(LEASE_MS),
    REGISTRY_EVICTION_TICK_MS: "50",
    LOG_LEVEL: "info",
  };
  const replicas: RegistryProcess[] = [await spawnRegistry("rk-a", env), await spawnRegistry("rk-b", env)];
  const c = await RawClient.connect(server.url, "rk.registry");
  let lookupsOk = 0;
  let lookupsFailed = 0;
  let stopLookups = false;
  try {
    const leaderOf = async () => {
      for (const r of replicas) if (metricValue(await r.metrics().catch(() => ""), "agent_registry_evictor_leader") === 1) return r;
      return null;
    };
    await waitFor(async () => (await leaderOf()) !== null, { timeoutMs: 10_000, message: "an evictor elected" });
    const leader = (await leaderOf())!;
    const survivor = replicas.find((r) => r !== leader)!;

    // A request the dead replica had already taken is lost with it, as in any system; a
    // coordinator retries once on a timeout, and then it must be answered.
    let retried = 0;
    const lookups = (async () => {
      while (!stopLookups) {
        let r = await c.request("lookup", { capability: "churn.run" }, 1000).catch(() => null);
        if (!r?.ok) {
          retried++;
          r = await c.request("lookup", { capability: "churn.run" }, 2000).catch(() => null);
        }
        if (r?.ok) lookupsOk++;
        else lookupsFailed++;
        await new Promise((res) => setTimeout(res, 20));
      }
    })();

    // Churn: instances that register, some that heartbeat, some that go silent, some that leave.
    const live = new Set<string>();
    const beat = setInterval(() => {
      for (const id of live) c.nc.publish(`rk.registry.heartbeat.churn.${id}`, "{}");
    }, 100);
    let killedAt = 0;
    for (let i = 0; i < 60; i++) {
      const id = `c${i}`;
      await c.request("register.churn", { spec: spec("churn"), instance_id: id, heartbeat_interval_ms: 200 }, 3000).catch(() => null);
      if (i % 3 === 0) live.add(id); // heartbeats: stays
      if (i % 3 === 1) await c.request(`deregister.churn.${id}`, {}, 3000).catch(() => null); // leaves gracefully
      // i % 3 === 2: silent, to be evicted
      if (i === 30) {
        await leader.kill();
        killedAt = Date.now();
      }
      await new Promise((res) => setTimeout(res, 30));
    }
    await waitFor(async () => metricValue(await survivor.metrics(), "agent_registry_evictor_leader") === 1, {
      timeoutMs: LEASE_MS * 4,
      message: "survivor takes the lease",
    });
    console.log(`takeover after kill -9: within ${Date.now() - killedAt} ms of the kill (lease ${LEASE_MS} ms)`);

    // Everything silent is evicted, everything heartbeating stays.
    await waitFor(async () => {
      const r = await c.request("get", { agent_type: "churn" }, 2000).catch(() => null);
      return r?.ok === true && r.body.agent.instances.length === live.size;
    }, { timeoutMs: 15_000, message: "silent instances evicted by the survivor" });
    clearInterval(beat);
    stopLookups = true;
    await lookups;
    expect(lookupsFailed).toBe(0);
    console.log(`lookups during churn and kill: ${lookupsOk} answered, ${retried} needed a retry`);
    expect(lookupsOk).toBeGreaterThan(20);

    await waitFor(async () => (await readStoredEvents(c.nc, "RK_EVENTS")).filter((e) => e.event.type === "registry.agent.deregistered").length >= 40, {
      timeoutMs: 10_000,
      message: "all removals stored",
    });
    const events = await readStoredEvents(c.nc, "RK_EVENTS");
    const ids = events.map((e) => e.event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const per = (type: string) => {
      const m = new Map<string, number>();
      for (const e of events.filter((x) => x.event.type === type)) m.set(e.event.data.instance_id, (m.get(e.event.data.instance_id) ?? 0) + 1);
      return m;
    };
    const registered = per("registry.agent.registered");
    const deregistered = per("registry.agent.deregistered");
    expect(registered.size).toBe(60);
    expect([...registered.values()].every((n) => n === 1)).toBe(true);
    expect([...deregistered.values()].every((n) => n === 1)).toBe(true);
    for (let i = 0; i < 60; i++) expect(deregistered.has(`c${i}`)).toBe(i % 3 !== 0);
    const revisions = events.map((e) => e.event.data.revision);
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  } finally {
    stopLookups = true;
    await c.close();
    for (const r of replicas) await r.stop();
  }
});
