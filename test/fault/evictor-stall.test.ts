/**
 * The evicting replica stalled or its wall clock stepped (issue 20's stall guard). A replica
 * that did not run for a while (SIGSTOP here; a suspended VM, swap or a starved process in
 * life) wakes with heartbeats unread in its socket, and a wall clock stepped forward (NTP, a
 * resumed VM) makes every deadline pass at once: in both, a pass that judged the view as it
 * stood would evict live agents whose heartbeats the replica had simply not read. The replica
 * must instead give every instance a whole window from the wake-up or the step, and still
 * evict the one that really stopped.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec } from "../harness/registry.js";
import { livenessTestEnv, metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { canSkewClocks, skewedClockEnv } from "../harness/skewed-clock.js";
import { waitFor } from "../harness/wait.js";

const INTERVAL = 300;
const WINDOW = 3 * INTERVAL;
/** The stall threshold is the lease period. */
const LEASE_MS = 1500;
const LIVE = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Fault = (replica: RegistryProcess) => Promise<void>;

/**
 * One replica, LIVE instances heartbeating all along and one that stops when the fault begins
 * or once it is over. After the fault: none of the live ones evicted, the stopped one evicted
 * (no sooner than a window after the fault ended when it stopped before), the guard counted.
 */
async function survives(tag: string, replicaEnv: Record<string, string>, deadStops: "before" | "after", fault: Fault): Promise<void> {
  await using server = await withNatsServer();
  const env = livenessTestEnv(tag, server.url, LEASE_MS);
  const client = await RawClient.connect(server.url, env.REGISTRY_PREFIX);
  const replica = await spawnRegistry(tag, { ...env, ...replicaEnv });
  let beat: NodeJS.Timeout | undefined;
  try {
    await waitFor(async () => metricValue(await replica.metrics(), "agent_registry_evictor_leader") === 1, { timeoutMs: 10_000, message: "the replica takes the lease" });
    const live = Array.from({ length: LIVE }, (_, i) => `l${i}`);
    for (const id of live) expect((await client.request("register.stall-live", { spec: spec("stall-live"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
    expect((await client.request("register.stall-dead", { spec: spec("stall-dead"), instance_id: "d", heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
    let deadBeats = true;
    beat = setInterval(() => {
      for (const id of live) client.nc.publish(`${env.REGISTRY_PREFIX}.heartbeat.stall-live.${id}`, "{}");
      if (deadBeats) client.nc.publish(`${env.REGISTRY_PREFIX}.heartbeat.stall-dead.d`, "{}");
    }, INTERVAL / 3);
    await sleep(2 * WINDOW);

    if (deadStops === "before") deadBeats = false;
    await fault(replica);
    const faultEnded = Date.now();
    deadBeats = false;

    const deregistered = async () => (await readStoredEvents(client.nc, env.REGISTRY_EVENTS_STREAM)).filter((e) => e.event.type === "registry.agent.deregistered");
    await waitFor(async () => (await deregistered()).length > 0, { timeoutMs: WINDOW + 15_000, message: "the stopped instance evicted" });
    const evictedAfter = Date.now() - faultEnded;
    // The live ones go on heartbeating: none is evicted, now or later.
    await sleep(3 * WINDOW);
    const events = await deregistered();
    expect(events.map((e) => `${e.event.data.agent_type}.${e.event.data.instance_id}`)).toEqual(["stall-dead.d"]);
    expect(events[0]!.event.data.reason).toBe("evicted");
    // A whole window from the end of the fault, or from its last heartbeat, sent up to a beat
    // period before the fault ended (the event read only adds delay).
    expect(evictedAfter).toBeGreaterThanOrEqual(deadStops === "before" ? WINDOW : WINDOW - INTERVAL / 3);
    const got = await client.request("get", { agent_type: "stall-live" });
    expect(got.body.agent.instances).toHaveLength(LIVE);
    const metrics = await replica.metrics();
    expect(metricValue(metrics, "agent_registry_evictor_stalls_total")).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, "agent_registry_evictions_total")).toBe(1);
    console.log(`${tag}: 0 of ${LIVE} live instances evicted; the stopped one evicted ${evictedAfter} ms after the fault ended (window ${WINDOW} ms)`);
  } finally {
    if (beat) clearInterval(beat);
    await replica.stop();
    await client.close();
  }
}

describe("the evicting replica after a stall or a step of its wall clock", () => {
  it("stopped (SIGSTOP) for three windows and more than a lease period: wakes without evicting the agents it did not hear", async () => {
    await survives("stall", {}, "before", async (replica) => {
      process.kill(replica.pid, "SIGSTOP");
      try {
        await sleep(Math.max(4 * WINDOW, 2 * LEASE_MS));
      } finally {
        process.kill(replica.pid, "SIGCONT");
      }
    });
  });

  it.runIf(canSkewClocks())("its wall clock stepped an hour forward (the monotonic clock running on): evicts no live agent", async () => {
    // libfaketime reads the offset from this file (again at most every second), so the test can step it.
    const dir = mkdtempSync(join(tmpdir(), "clock-step-"));
    const offsetFile = join(dir, "offset");
    writeFileSync(offsetFile, "+0s\n");
    try {
      const { LD_PRELOAD } = skewedClockEnv("+0s");
      const stepped = { LD_PRELOAD: LD_PRELOAD!, FAKETIME_TIMESTAMP_FILE: offsetFile, FAKETIME_CACHE_DURATION: "1", FAKETIME_DONT_FAKE_MONOTONIC: "1" };
      // The stopped one stops after the step: stopped before, its deadline could pass before the replica read the step.
      await survives("step", stepped, "after", async () => {
        writeFileSync(offsetFile, "+3600s\n");
        // The replica rereads the file within a second.
        await sleep(1500);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
