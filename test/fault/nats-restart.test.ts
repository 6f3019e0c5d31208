/**
 * The NATS server killed with -9 and restarted while a fleet heartbeats: no live instance is
 * evicted, no spec is lost, the view and its watch resume by themselves, and events resume
 * with no gap and no duplicate. Prints the time to recover. A replica that keeps the evictor
 * lease through the restart evicts nobody either: the reconnect gives every instance a window.
 */
import { expect, it } from "vitest";
import { canControlNatsServers, withNatsServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const FLEET = Number(process.env.FAULT_FLEET ?? 1000);
const INTERVAL = 1000;

it.runIf(canControlNatsServers())(`survives kill -9 of the NATS server with ${FLEET} heartbeating instances`, async () => {
  await using server = await withNatsServer();
  await using reg = await startRegistry(server.url, { leaseMs: 1500 });
  const c = await RawClient.connect(server.url, configOf(reg).prefix);
  const agents = await RawClient.connect(server.url, configOf(reg).prefix);
  let beat: NodeJS.Timeout | undefined;
  try {
    await waitFor(() => reg.isEvictor, { message: "evictor elected" });
    const types = 10;
    // Agents heartbeat on their interval, in slices, as a real fleet would, from the moment they
    // register: on a loaded machine 1,000 registrations can take longer than an eviction window.
    let tick = 0;
    let beating = 0;
    const slices = 10;
    beat = setInterval(() => {
      for (let i = tick % slices; i < beating; i += slices) agents.nc.publish(`${c.prefix}.heartbeat.fleet-${i % types}.i${i}`, "{}");
      tick++;
    }, INTERVAL / slices / 2);
    for (let i = 0; i < FLEET; i++) {
      const t = `fleet-${i % types}`;
      const r = await c.request(`register.${t}`, { spec: spec(t), instance_id: `i${i}`, heartbeat_interval_ms: INTERVAL });
      expect(r.ok).toBe(true);
      beating = i + 1;
    }
    await waitFor(() => countLive(reg, types) === FLEET, { timeoutMs: 20_000, message: "fleet registered" });
    const before = await readStoredEvents(c.nc, configOf(reg).eventsStream);

    await server.kill();
    await new Promise((r) => setTimeout(r, 1500));
    const restartedAt = Date.now();
    await server.restart();

    // Recovery: a registration after the restart is answered and reflected by the view.
    let recoveredAt = 0;
    await waitFor(async () => {
      const r = await c.request("register.after-restart", { spec: spec("after-restart"), instance_id: "x" }, 1000).catch(() => null);
      if (!r?.ok) return false;
      const q = await c.request("lookup", { capability: "after-restart.run", min_revision: r.body.revision }, 3000).catch(() => null);
      if (q?.ok && q.body.providers.length === 1) recoveredAt = Date.now();
      return recoveredAt > 0;
    }, { timeoutMs: 30_000, intervalMs: 200, message: "registry answers writes and reads after the restart" });
    console.log(`recovery after NATS restart: ${recoveredAt - restartedAt} ms (fleet ${FLEET})`);

    // Several eviction windows later, every heartbeating instance is still there.
    await new Promise((r) => setTimeout(r, 4 * INTERVAL * 3));
    expect(countLive(reg, types)).toBe(FLEET);
    for (let t = 0; t < types; t++) expect(reg.view.get(`fleet-${t}`)?.spec.version).toBe("1.0.0");

    await waitFor(async () => (await readStoredEvents(c.nc, configOf(reg).eventsStream)).some((e) => e.event.data.agent_type === "after-restart"), {
      timeoutMs: 10_000,
      message: "events resume after the restart",
    });
    const after = await readStoredEvents(c.nc, configOf(reg).eventsStream);
    expect(after.filter((e) => e.event.type === "registry.agent.deregistered" && e.event.data.reason === "evicted")).toEqual([]);
    const ids = after.map((e) => e.event.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Everything stored before the crash is still there, and nothing was lost in between.
    expect(after.length).toBeGreaterThanOrEqual(before.length + 1);
    const registered = new Set(after.filter((e) => e.event.type === "registry.agent.registered").map((e) => `${e.event.data.agent_type}/${e.event.data.instance_id}`));
    expect(registered.size).toBe(FLEET + 1);
  } finally {
    if (beat) clearInterval(beat);
    await agents.close();
    await c.close();
  }
});

it.runIf(canControlNatsServers())("a NATS restart while the evicting replica keeps its lease evicts nobody who heartbeats again", async () => {
  await using server = await withNatsServer();
  // A lease far longer than the outage: the replica stays the evicting one throughout, so
  // only the reconnect itself can give the fleet its window back.
  await using reg = await startRegistry(server.url, { leaseMs: 30_000 });
  const c = await RawClient.connect(server.url, configOf(reg).prefix);
  const interval = 500;
  const fleet = 20;
  let beat: NodeJS.Timeout | undefined;
  try {
    await waitFor(() => reg.isEvictor, { message: "evictor elected" });
    for (let i = 0; i < fleet; i++) {
      const r = await c.request("register.kept", { spec: spec("kept"), instance_id: `i${i}`, heartbeat_interval_ms: interval });
      expect(r.ok).toBe(true);
    }
    beat = setInterval(() => {
      for (let i = 0; i < fleet; i++) c.nc.publish(`${c.prefix}.heartbeat.kept.i${i}`, "{}");
    }, interval / 2);

    await server.kill();
    // Longer than the eviction window (3 x 500 ms): every deadline passes while NATS is down.
    await new Promise((r) => setTimeout(r, 2500));
    await server.restart();
    await waitFor(async () => (await c.request("register.kept", { spec: spec("kept"), instance_id: "probe" }, 1000).catch(() => null))?.ok === true, {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "registry answers writes after the restart",
    });
    await new Promise((r) => setTimeout(r, 4 * 3 * interval));

    expect(reg.isEvictor).toBe(true);
    expect(reg.view.get("kept")?.instances.size).toBe(fleet + 1);
    // Not one eviction was even tried in the dark: nats.js would have sent it after the
    // reconnect, where it could succeed (this run's own timing decides; the test cannot).
    expect(reg.logs.filter((l) => l.msg === "eviction write failed" || l.msg === "evicted")).toEqual([]);
    const stored = await readStoredEvents(c.nc, configOf(reg).eventsStream);
    expect(stored.filter((e) => e.event.type === "registry.agent.deregistered")).toEqual([]);
  } finally {
    if (beat) clearInterval(beat);
    await c.close();
  }
});

function countLive(reg: { view: { get(t: string): { instances: ReadonlyMap<string, unknown> } | undefined } }, types: number): number {
  let n = 0;
  for (let t = 0; t < types; t++) n += reg.view.get(`fleet-${t}`)?.instances.size ?? 0;
  return n;
}
