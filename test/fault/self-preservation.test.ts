/**
 * Self-preservation (off by default, REGISTRY_SELF_PRESERVATION_RATIO): when most live
 * instances go silent at once, the likelier story is that the registry stopped hearing them,
 * so evictions pause, `agent_registry_self_preservation_active` is 1 and a
 * `registry.alert.self_preservation` event is stored; heartbeats coming back clear it and
 * evictions resume. With it off, the same silence evicts every silent instance.
 * Heartbeats are staggered over the interval, as a real fleet's are: instances do not go
 * overdue in the same tick.
 */
import { describe, expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { metricValue } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";

const INTERVAL = 300;
const WINDOW = 3 * INTERVAL;
const FLEET = 20;
const SILENT = 15;
const ids = Array.from({ length: FLEET }, (_, i) => `i${i}`);

type Fleet = { reg: TestRegistry; c: RawClient; beating: Set<string>; stop(): Promise<void> };

/** A registry and FLEET instances of one type, each heartbeating on its own phase while in `beating`. */
async function fleet(serverUrl: string, ratio: number): Promise<Fleet> {
  const reg = await startRegistry(serverUrl, { selfPreservationRatio: ratio });
  const c = await RawClient.connect(serverUrl, configOf(reg).prefix);
  await waitFor(() => reg.isEvictor, { message: "evictor elected" });
  for (const id of ids) expect((await c.request("register.sp-fleet", { spec: spec("sp-fleet"), instance_id: id, heartbeat_interval_ms: INTERVAL })).ok).toBe(true);
  const beating = new Set(ids);
  const timers: NodeJS.Timeout[] = [];
  ids.forEach((id, k) => {
    const beat = () => beating.has(id) && c.nc.publish(`${c.prefix}.heartbeat.sp-fleet.${id}`, "{}");
    timers.push(setTimeout(() => timers.push(setInterval(beat, INTERVAL)), (k * INTERVAL) / FLEET));
  });
  return {
    reg,
    c,
    beating,
    stop: async () => {
      for (const t of timers) clearTimeout(t);
      await c.close();
      await reg.stop("test over");
    },
  };
}

const live = (reg: TestRegistry) => reg.view.get("sp-fleet")?.instances.size ?? 0;
const preserving = async (reg: TestRegistry) =>
  metricValue(await (await fetch(`http://127.0.0.1:${reg.httpPort}/metrics`)).text(), "agent_registry_self_preservation_active");
const alerts = async (f: Fleet) =>
  (await readStoredEvents(f.c.nc, configOf(f.reg).eventsStream)).filter((e) => e.event.type === "registry.alert.self_preservation").map((e) => e.event);
const evictions = async (f: Fleet) =>
  (await readStoredEvents(f.c.nc, configOf(f.reg).eventsStream)).filter((e) => e.event.type === "registry.agent.deregistered" && e.event.data.reason === "evicted");

describe("self-preservation", () => {
  it(`on (ratio 0.5): ${SILENT} of ${FLEET} instances silent at once pause evictions, and heartbeats clear it`, async () => {
    await using server = await withNatsServer();
    const f = await fleet(server.url, 0.5);
    try {
      await new Promise((r) => setTimeout(r, 2 * WINDOW));
      expect(live(f.reg)).toBe(FLEET);
      const silencedAt = Date.now();
      for (const id of ids.slice(0, SILENT)) f.beating.delete(id);

      await waitFor(async () => (await preserving(f.reg)) === 1, { timeoutMs: 3 * WINDOW, message: "self-preservation metric is 1" });
      const pausedAfter = Date.now() - silencedAt;
      // Held for several windows: nothing is evicted, although the silent ones are long overdue.
      await new Promise((r) => setTimeout(r, 3 * WINDOW));
      expect(live(f.reg)).toBe(FLEET);
      expect(await preserving(f.reg)).toBe(1);
      expect(await evictions(f)).toEqual([]);
      await waitFor(async () => (await alerts(f)).some((a) => a.data.active === true), { timeoutMs: 5000, message: "alert stored" });
      const raised = (await alerts(f)).find((a) => a.data.active === true)!;
      expect(raised).toMatchObject({ specversion: "1.0", source: "agent-registry", subject: "self_preservation", data: { threshold: 0.5 } });
      expect(raised.data.ratio).toBeGreaterThan(0.5);

      const resumedAt = Date.now();
      for (const id of ids) f.beating.add(id);
      await waitFor(async () => (await preserving(f.reg)) === 0, { timeoutMs: 2 * WINDOW, message: "self-preservation clears" });
      const clearedAfter = Date.now() - resumedAt;
      await waitFor(async () => (await alerts(f)).some((a) => a.data.active === false), { timeoutMs: 5000, message: "all-clear stored" });
      expect(live(f.reg)).toBe(FLEET);
      expect(await evictions(f)).toEqual([]);

      // Evictions resume: a few silent instances (under the ratio) are evicted as usual.
      for (const id of ids.slice(0, 2)) f.beating.delete(id);
      await waitFor(() => live(f.reg) === FLEET - 2, { timeoutMs: WINDOW + 3000, message: "evictions resumed" });
      // The view applies a tombstone before the lease holder's event about it is stored.
      await waitFor(async () => (await evictions(f)).length >= 2, { timeoutMs: 5000, message: "evictions stored" });
      expect((await evictions(f)).map((e) => e.event.data.instance_id).sort()).toEqual(["i0", "i1"]);
      expect(await preserving(f.reg)).toBe(0);
      console.log(`self-preservation: paused ${pausedAfter} ms after ${SILENT}/${FLEET} went silent (window ${WINDOW} ms); cleared ${clearedAfter} ms after heartbeats resumed`);
    } finally {
      await f.stop();
    }
  });

  it(`off (the default): the same ${SILENT} silent instances are all evicted`, async () => {
    await using server = await withNatsServer();
    const f = await fleet(server.url, 0);
    try {
      await new Promise((r) => setTimeout(r, 2 * WINDOW));
      expect(live(f.reg)).toBe(FLEET);
      const silencedAt = Date.now();
      for (const id of ids.slice(0, SILENT)) f.beating.delete(id);
      await waitFor(() => live(f.reg) === FLEET - SILENT, { timeoutMs: WINDOW + 3000, message: "silent instances evicted" });
      const evictedAfter = Date.now() - silencedAt;
      await new Promise((r) => setTimeout(r, WINDOW));
      expect(live(f.reg)).toBe(FLEET - SILENT);
      expect(await preserving(f.reg)).toBe(0);
      await waitFor(async () => (await evictions(f)).length === SILENT, { timeoutMs: 5000, message: "evictions stored" });
      expect((await evictions(f)).map((e) => e.event.data.instance_id).sort()).toEqual(ids.slice(0, SILENT).sort());
      expect(await alerts(f)).toEqual([]);
      console.log(`self-preservation off: ${SILENT}/${FLEET} silent instances evicted within ${evictedAfter} ms of going silent (window ${WINDOW} ms)`);
    } finally {
      await f.stop();
    }
  });
});
