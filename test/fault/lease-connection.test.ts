/**
 * The evictor lease on a connection of its own (docs/architecture.md, "Liveness"). Under
 * overload the API connection falls seconds behind: what nats-server sends it waits in the
 * server's buffer behind thousands of heartbeats. Lease renewals that shared it timed out
 * behind them, and the replica gave its lease up and took it back, each time with a new grace
 * window, so nobody was evicted for minutes (fleet-1m, docs/performance.md). A proxy in front
 * of nats-server holds back one connection of the replica at a time:
 * - the API connection seconds behind: the lease holds;
 * - the API connection down: the lease is given up all the same (the replica hears no
 *   heartbeat, so another one must evict), and taken back once it is up again.
 */
import { describe, expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { withNatsProxy } from "../harness/nats-proxy.js";
import { RawClient, spec } from "../harness/registry.js";
import { livenessTestEnv, metricValue, spawnRegistry } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";

const LEASE_MS = 1500;
/** Past the store's request timeout (5 s), so a renewal that waited behind the hold timed out. */
const HOLD_MS = 7000;
/** Long enough that nothing live is late across the hold. */
const INTERVAL = 5000;
const LIVE = 5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const leader = async (metrics: () => Promise<string>): Promise<number> => metricValue(await metrics(), "agent_registry_evictor_leader");

describe("the evictor lease's own connection", () => {
  it("keeps the lease while the API connection is seconds behind", async () => {
    await using server = await withNatsServer();
    await using proxy = await withNatsProxy(server.url);
    const env = livenessTestEnv("leasebehind", proxy.url, LEASE_MS);
    const client = await RawClient.connect(server.url, env.REGISTRY_PREFIX);
    const replica = await spawnRegistry("lease-behind", env);
    let beat: NodeJS.Timeout | undefined;
    let sampling = true;
    try {
      await waitFor(async () => (await leader(replica.metrics)) === 1, { timeoutMs: 10_000, message: "the replica takes the lease" });
      const ids = Array.from({ length: LIVE }, (_, i) => `i${i}`);
      for (const id of ids) expect((await client.request("register.behind", { spec: spec("behind"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
      beat = setInterval(() => {
        for (const id of ids) client.nc.publish(`${env.REGISTRY_PREFIX}.heartbeat.behind.${id}`, "{}");
      }, 1000);

      const samples: number[] = [];
      const sampler = (async () => {
        while (sampling) {
          samples.push(await leader(replica.metrics));
          await sleep(100);
        }
      })();
      proxy.hold((name) => name === "agent-registry:lease-behind");
      const heldSince = Date.now();
      // The hold works: a request to the replica gets no answer while it lasts.
      await expect(client.request("get", { agent_type: "behind" }, 1000)).rejects.toThrow();
      await sleep(HOLD_MS - (Date.now() - heldSince));
      proxy.release();
      await sleep(2 * LEASE_MS);
      sampling = false;
      await sampler;

      expect(samples.length).toBeGreaterThan(20);
      expect(samples.filter((s) => s !== 1)).toEqual([]);
      expect(replica.logs.filter((l) => l.includes("gave up the evictor lease"))).toEqual([]);
      const got = await client.request("get", { agent_type: "behind" });
      expect(got.body.agent.instances).toHaveLength(LIVE);
      expect(metricValue(await replica.metrics(), "agent_registry_evictions_total")).toBe(0);
      expect(proxy.names).toEqual(expect.arrayContaining(["agent-registry:lease-behind", "agent-registry:lease-behind:lease"]));
      console.log(`lease-behind: the lease held through ${HOLD_MS} ms of an API connection held back (${samples.length} samples), 0 of ${LIVE} evicted`);
    } finally {
      sampling = false;
      if (beat) clearInterval(beat);
      await replica.stop();
      await client.close();
    }
  }, 60_000);

  it("gives the lease up while the API connection is down, though its own connection is up, and takes it back after", async () => {
    await using server = await withNatsServer();
    await using proxy = await withNatsProxy(server.url);
    const env = livenessTestEnv("leasedown", proxy.url, LEASE_MS);
    const replica = await spawnRegistry("lease-down", env);
    try {
      await waitFor(async () => (await leader(replica.metrics)) === 1, { timeoutMs: 10_000, message: "the replica takes the lease" });
      const api = (name: string) => name === "agent-registry:lease-down";
      proxy.refuse(api);
      const downSince = Date.now();
      await waitFor(async () => (await leader(replica.metrics)) === 0, { timeoutMs: 4 * LEASE_MS, message: "the lease given up" });
      const gaveUpAfter = Date.now() - downSince;
      expect(replica.logs.some((l) => l.includes("gave up the evictor lease") && l.includes("connection to NATS is down"))).toBe(true);
      // Its own connection was never touched: only the API connection was made again.
      expect(proxy.names.filter((n) => n === "agent-registry:lease-down:lease")).toHaveLength(1);
      proxy.admit();
      await waitFor(async () => (await leader(replica.metrics)) === 1, { timeoutMs: 15_000, message: "the lease taken back" });
      console.log(`lease-down: the lease given up ${gaveUpAfter} ms after the API connection went down (lease ${LEASE_MS} ms), taken back once it was up`);
    } finally {
      await replica.stop();
    }
  }, 60_000);
});
