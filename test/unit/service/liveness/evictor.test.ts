import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import type { LivenessPolicy } from "../../../../src/domain/lifecycle/liveness.js";
import type { InstanceState } from "../../../../src/domain/model/model.js";
import { agentKey, decodeAgentRecord, decodeInstanceRecord, encodeRecord, instanceKey, type LiveInstanceRecord } from "../../../../src/domain/model/records.js";
import { decodeClaim, encodeClaim, subjectClaimKey } from "../../../../src/domain/model/subject-claims.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { Evictor, stallThresholdMs } from "../../../../src/service/liveness/evictor.js";
import { silentLogger } from "../../../../src/kit/logger.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { catchUp, registrarSettings } from "../../fixtures.js";

const RETENTION = 60_000;

let t: number;
let store: MemoryStore;
let view: RegistryView;
let evictor: Evictor;
let evicted: Array<{ id: string; lateness: number }>;
let preservation: boolean[];
let stalls: Array<{ monotonicGapMs: number; wallGapMs: number }>;
/** The monotonic clock runs with `t` but for this offset: a wall clock step moves `t` alone. */
let monotonicOffset: number;

/** `stallMs` is infinite unless a test is about stalls: the others jump `t` by minutes between ticks. */
function makeEvictor(policy: LivenessPolicy = { missedHeartbeats: 3, selfPreservationRatio: 0 }, stallMs = Number.POSITIVE_INFINITY): Evictor {
  return new Evictor({
    store,
    view,
    clock: { now: () => t },
    monotonic: () => t + monotonicOffset,
    log: silentLogger,
    policy,
    tickMs: 3_600_000, // never fires by itself: the tests call tick()
    retentionMs: RETENTION,
    stallMs,
    hooks: {
      onEvicted: (i: InstanceState, lateness: number) => evicted.push({ id: i.instance_id, lateness }),
      onSelfPreservation: (active) => preservation.push(active),
      onStall: (detail) => stalls.push(detail),
    },
  });
}

const live = (lastHeartbeat: number, intervalMs = 1000): LiveInstanceRecord => ({
  kind: "instance",
  version: "1.0.0",
  status: "ready",
  registered_at: 0,
  last_heartbeat: lastHeartbeat,
  heartbeat_interval_ms: intervalMs,
  active_tasks: 0,
  metadata: {},
  spec_changed: false,
});

async function addAgent(type: string): Promise<void> {
  const spec = agentSpecSchema.parse({
    agent_type: type, version: "1.0.0", description: "", owner_team: "t",
    capabilities: [{ name: `${type}.run`, description: "", input_schema: {}, output_schema: {} }],
    nats_subject: `tasks.${type}`, consumer_group: type,
  });
  await store.write(agentKey(type), encodeRecord({ kind: "agent", spec, registered_at: 0, updated_at: 0 }), 0);
}

async function addInstance(type: string, id: string, lastHeartbeat: number, intervalMs = 1000): Promise<number> {
  return store.write(instanceKey(type, id), encodeRecord(live(lastHeartbeat, intervalMs)), 0);
}

async function record(type: string, id: string) {
  const e = await store.get(instanceKey(type, id));
  return e && e.operation === "PUT" ? decodeInstanceRecord(e.value) : e;
}

beforeEach(() => {
  t = 0;
  store = new MemoryStore();
  store.now = () => t;
  // The view stamps what it applies with the evictor's clock, as main.ts wires them.
  view = new RegistryView({ now: () => t });
  evicted = [];
  preservation = [];
  stalls = [];
  monotonicOffset = 0;
  evictor = makeEvictor();
});

afterEach(() => evictor.stop());

describe("Evictor after a stall or a step of the wall clock", () => {
  const STALL_MS = 5000;

  /** An instance heard at 0 with a 1 s interval (deadline 3,000), the evictor started at 0 and ticking at 100. */
  async function fleetOfOne(): Promise<void> {
    evictor = makeEvictor(undefined, STALL_MS);
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    evictor.start(0);
    t = 100;
    await evictor.tick();
  }

  it("gives every instance a whole window from the wake-up when the evictor did not run for longer than stallMs", async () => {
    await fleetOfOne();
    // Stopped from 100 to 10,000: the heartbeats of that time are still unread in the socket.
    t = 10_000;
    await evictor.tick();
    expect(evicted).toEqual([]);
    expect(stalls).toEqual([{ monotonicGapMs: 9900, wallGapMs: 9900 }]);
    t = 12_999;
    await evictor.tick();
    expect(evicted).toEqual([]);
    // Never heard again: evicted one window after the wake-up, and counted late from there.
    t = 13_000;
    await evictor.tick();
    expect(evicted).toEqual([{ id: "a", lateness: 0 }]);
    expect(stalls).toHaveLength(1);
  });

  it("keeps an instance whose heartbeat, sent during the stall, is applied after the wake-up", async () => {
    await fleetOfOne();
    t = 10_000;
    await evictor.tick();
    // The buffered heartbeat is read and stored after the first tick of the wake-up.
    const current = await store.get(instanceKey("alpha", "a"));
    await store.write(instanceKey("alpha", "a"), encodeRecord(live(9000)), current!.revision);
    t = 10_050;
    await catchUp(store, view);
    t = 13_000;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t = 13_050;
    await evictor.tick();
    expect(evicted.map((e) => e.id)).toEqual(["a"]);
  });

  it("gives every instance a whole window when the wall clock steps forward, the monotonic clock running on", async () => {
    await fleetOfOne();
    t = 600;
    await evictor.tick();
    // An NTP step of an hour between two ticks 500 ms apart.
    t += 500 + 3_600_000;
    monotonicOffset -= 3_600_000;
    await evictor.tick();
    expect(evicted).toEqual([]);
    expect(stalls).toEqual([{ monotonicGapMs: 500, wallGapMs: 3_600_500 }]);
    t += 2999;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t += 1;
    await evictor.tick();
    expect(evicted.map((e) => e.id)).toEqual(["a"]);
  });

  it("treats a step backwards as a step too, and ticks at their pace as nothing", async () => {
    await fleetOfOne();
    t = 2000;
    await evictor.tick();
    expect(stalls).toEqual([]);
    t -= 5000;
    monotonicOffset += 5000;
    await evictor.tick();
    expect(stalls).toEqual([{ monotonicGapMs: 0, wallGapMs: -5000 }]);
  });

  it("takes a lease period for a stall, and never less than four ticks", () => {
    expect(stallThresholdMs(5000, 250)).toBe(5000);
    // A tick slower than the lease is not a stall at every turn.
    expect(stallThresholdMs(5000, 10_000)).toBe(40_000);
    expect(stallThresholdMs(200, 250)).toBe(1000);
  });

  it("does not count a gap that ended while it was stopped: start() begins a new count", async () => {
    await fleetOfOne();
    evictor.stop();
    t = 60_000;
    evictor.start(60_000);
    await evictor.tick();
    expect(stalls).toEqual([]);
  });
});

describe("Evictor", () => {
  it("evicts exactly the instances past their deadline", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await addInstance("alpha", "c", 0, 2000);
    await catchUp(store, view);
    t = 500;
    await addInstance("alpha", "b", 500);
    await catchUp(store, view);
    evictor.start(0);
    t = 3000;
    await evictor.tick();
    expect(evicted).toEqual([{ id: "a", lateness: 0 }]);
    expect(await record("alpha", "a")).toMatchObject({ kind: "gone", reason: "evicted", at: 3000, last_heartbeat: 0 });
    expect(await record("alpha", "b")).toMatchObject({ kind: "instance" });
    await catchUp(store, view);
    t = 3600;
    await evictor.tick();
    expect(evicted.map((e) => e.id)).toEqual(["a", "b"]);
    expect(evicted[1]?.lateness).toBe(100);
    expect(await record("alpha", "c")).toMatchObject({ kind: "instance" });
  });

  it("never evicts an instance whose heartbeat landed after the view saw it", async () => {
    await addAgent("alpha");
    const rev = await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    // The heartbeat reaches the store, but not yet this replica's view.
    await store.write(instanceKey("alpha", "a"), encodeRecord(live(2900)), rev);
    evictor.start(0);
    t = 3000;
    await evictor.tick();
    expect(evicted).toEqual([]);
    expect(await record("alpha", "a")).toMatchObject({ kind: "instance", last_heartbeat: 2900 });
    await catchUp(store, view);
    await evictor.tick();
    expect(evicted).toEqual([]);
    // Counted from when this replica heard it (3,000 on its clock), not from the stamp.
    t = 5999;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t = 6000;
    await evictor.tick();
    expect(evicted.map((e) => e.id)).toEqual(["a"]);
  });

  it("never evicts an instance whose heartbeat the view applied while the pass was still evicting others", async () => {
    // More overdue instances than evictions in flight, so the last one is written after an
    // await; by then its heartbeat has reached the view, which updates the instance in place.
    await addAgent("alpha");
    const ids = Array.from({ length: 65 }, (_, i) => `i${i}`);
    const last = ids[ids.length - 1]!;
    const revisions = new Map<string, number>();
    for (const id of ids) revisions.set(id, await addInstance("alpha", id, 0));
    await catchUp(store, view);
    const real = store;
    // The first eviction write lets the heartbeat through (store, then view) before any
    // eviction is written.
    let heartbeatApplied: Promise<void> | null = null;
    store = Object.assign(Object.create(real) as MemoryStore, {
      async write(key: string, value: Uint8Array, expected: number): Promise<number> {
        heartbeatApplied ??= (async () => {
          await real.write(instanceKey("alpha", last), encodeRecord(live(2900)), revisions.get(last)!);
          await catchUp(real, view);
        })();
        await heartbeatApplied;
        return real.write(key, value, expected);
      },
    });
    evictor = makeEvictor();
    evictor.start(0);
    t = 3000;
    await evictor.tick();
    expect(view.instance("alpha", last)?.last_heartbeat).toBe(2900);
    expect(evicted.map((e) => e.id)).not.toContain(last);
    expect(evicted).toHaveLength(64);
    expect(await record("alpha", last)).toMatchObject({ kind: "instance", last_heartbeat: 2900 });
  });

  it("lets only one of two evictors with the same view evict an instance", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    const other = makeEvictor();
    evictor.start(0);
    other.start(0);
    t = 4000;
    await Promise.all([evictor.tick(), other.tick()]);
    other.stop();
    expect(evicted).toHaveLength(1);
    expect((await store.lastRevision()) - view.revision).toBe(1);
  });

  it("evicts nothing within a full window of the grace start", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await addInstance("alpha", "static", 0);
    await catchUp(store, view);
    evictor.start(10_000);
    t = 12_999;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t = 13_000;
    await evictor.tick();
    expect(evicted.map((e) => e.id)).toEqual(["a"]);
    t = 1e9;
    await evictor.tick();
    expect(await record("alpha", "static")).toMatchObject({ kind: "instance" });
  });

  it("measures lateness from the grace-pushed deadline", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    evictor.start(10_000);
    t = 13_250;
    await evictor.tick();
    expect(evicted).toEqual([{ id: "a", lateness: 250 }]);
  });

  it("holds evictions back under self-preservation and resumes when it ends", async () => {
    evictor = makeEvictor({ missedHeartbeats: 3, selfPreservationRatio: 0.5 });
    await addAgent("alpha");
    for (let i = 0; i < 6; i++) await addInstance("alpha", `i${i}`, 0);
    await catchUp(store, view);
    evictor.start(0);
    t = 100_000;
    for (let i = 6; i < 10; i++) await addInstance("alpha", `i${i}`, 100_000);
    await catchUp(store, view);
    await evictor.tick();
    expect(evicted).toEqual([]);
    expect(preservation).toEqual([true]);
    // Two of the overdue come back: 4 of 10 is under the ratio.
    for (const id of ["i0", "i1"]) {
      const e = await store.get(instanceKey("alpha", id));
      await store.write(instanceKey("alpha", id), encodeRecord(live(100_000)), e!.revision);
    }
    await catchUp(store, view);
    await evictor.tick();
    expect(preservation).toEqual([true, false]);
    // The others get a whole window from the end of the pause to be heard again (a grace start).
    expect(evicted).toEqual([]);
    t = 102_999;
    await evictor.tick();
    expect(evicted).toEqual([]);
    // Meanwhile the six that live heartbeat on; the four silent ones go at the end of the window.
    for (const id of ["i0", "i1", "i6", "i7", "i8", "i9"]) {
      const e = await store.get(instanceKey("alpha", id));
      await store.write(instanceKey("alpha", id), encodeRecord(live(102_500)), e!.revision);
    }
    await catchUp(store, view);
    t = 103_000;
    await evictor.tick();
    expect(evicted.map((e) => e.id).sort()).toEqual(["i2", "i3", "i4", "i5"]);
  });

  it("evicts nothing for a whole window after the store failed (heartbeats may have been lost)", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    evictor.start(0);
    // A heartbeat could not be stored at 2,500: the instance may well be alive.
    evictor.storeUnavailable(2500);
    t = 3000;
    await evictor.tick();
    t = 5499;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t = 5500;
    await evictor.tick();
    expect(evicted).toEqual([{ id: "a", lateness: 0 }]);
  });

  it("runs no pass while disconnected from NATS, and gives a whole window after the reconnect", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    evictor.start(0);
    evictor.disconnected();
    const writes: string[] = [];
    const write = store.write.bind(store);
    store.write = (key, value, expected) => (writes.push(key), write(key, value, expected));
    // Overdue since 3,000, but nothing is even tried while cut off.
    t = 4000;
    await evictor.tick();
    expect(writes).toEqual([]);
    evictor.reconnected(4500);
    t = 7499;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t = 7500;
    await evictor.tick();
    expect(evicted).toEqual([{ id: "a", lateness: 0 }]);
  });

  it("counts its own failed eviction writes as store failures", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    evictor.start(0);
    const write = store.write.bind(store);
    store.write = () => Promise.reject(new Error("no responders"));
    t = 3000;
    await evictor.tick();
    store.write = write;
    t = 3100;
    await evictor.tick();
    expect(evicted).toEqual([]);
    t = 6000;
    await evictor.tick();
    expect(evicted.map((e) => e.id)).toEqual(["a"]);
  });

  it("sweeps tombstones and then the deregistered agent after the retention period", async () => {
    await addAgent("alpha");
    const rev = await addInstance("alpha", "a", 0);
    await catchUp(store, view);
    evictor.start(0);
    t = 1000;
    await store.write(instanceKey("alpha", "a"), encodeRecord({ kind: "gone", version: "1.0.0", reason: "graceful", at: 1000, registered_at: 0, last_heartbeat: 0 }), rev);
    await catchUp(store, view);
    t = 60_000; // a sweep, but the tombstone is younger than the retention period
    await evictor.tick();
    await catchUp(store, view);
    expect(view.tombstones("alpha").size).toBe(1);
    expect(view.get("alpha")?.status).toBe("deregistered");
    t = 91_000;
    await evictor.tick();
    // Purged: a delete would leave the instance's last records in the bucket for ever.
    expect((await store.get(instanceKey("alpha", "a")))?.operation).toBe("PURGE");
    await catchUp(store, view);
    expect(view.tombstones("alpha").size).toBe(0);
    expect(view.get("alpha")).toBeDefined();
    t = 121_000;
    await evictor.tick();
    expect((await store.get(agentKey("alpha")))?.operation).toBe("PURGE");
    await catchUp(store, view);
    expect(view.get("alpha")).toBeUndefined();
  });

  it("keeps a deregistered agent whose instance registers again while the sweep runs", async () => {
    await addAgent("alpha");
    await catchUp(store, view);
    evictor.start(0);
    t = 200_000;
    const registrarView = new RegistryView();
    await catchUp(store, registrarView);
    const registrar = new Registrar({
      store, view: registrarView, checker: new InlineSchemaChecks(), clock: { now: () => t },
      settings: registrarSettings({ defaultHeartbeatIntervalMs: 1000, minHeartbeatIntervalMs: 100, maxHeartbeatIntervalMs: 60_000 }),
    });
    const spec = decodeAgentRecord((await store.get(agentKey("alpha")))!.value)!.spec;
    await registrar.register("alpha", { spec, instance_id: "back" });
    await evictor.tick(); // this replica's view has not applied the register yet
    expect((await store.get(agentKey("alpha")))?.operation).toBe("PUT");
  });

  it("gives a removed type's subject back, claim first, and keeps it while the type is down", async () => {
    const registrar = new Registrar({
      store, view, checker: new InlineSchemaChecks(), clock: { now: () => t },
      settings: registrarSettings({ defaultHeartbeatIntervalMs: 1000, minHeartbeatIntervalMs: 100, maxHeartbeatIntervalMs: 60_000 }),
    });
    const spec = (type: string) => ({
      agent_type: type, version: "1.0.0", description: "", owner_team: "t", nats_subject: "tasks.shared", consumer_group: type,
      capabilities: [{ name: `${type}.run`, description: "", input_schema: {}, output_schema: {} }],
    });
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "a" });
    await catchUp(store, view);
    await registrar.deregisterInstance("alpha", "a");
    await catchUp(store, view);
    evictor.start(0);
    t = 31_000; // a sweep within the retention period: the tombstone and the claim stay
    await evictor.tick();
    await catchUp(store, view);
    expect(view.claims.forSubject("tasks.shared")?.record.agent_type).toBe("alpha");
    await expect(registrar.register("beta", { spec: spec("beta") })).rejects.toMatchObject({ code: "conflict" });
    t = 62_000; // the tombstone goes
    await evictor.tick();
    await catchUp(store, view);
    t = 93_000; // then the claim and the type
    await evictor.tick();
    expect((await store.get(subjectClaimKey("tasks.shared")))?.operation).toBe("DEL");
    expect((await store.get(agentKey("alpha")))?.operation).toBe("PURGE");
    await catchUp(store, view);
    expect((await registrar.register("beta", { spec: spec("beta") })).agent_type).toBe("beta");
  });

  it("removes a claim no spec stands behind once two sweeps in a row saw it unchanged", async () => {
    const orphan = { kind: "subject_claim" as const, subject: "tasks.gone", agent_type: "ghost", tenant_scope: null, at: 0 };
    const rev = await store.write(subjectClaimKey("tasks.gone"), encodeClaim(orphan), 0);
    await catchUp(store, view);
    evictor.start(0);
    t = 31_000;
    await evictor.tick();
    expect((await store.get(subjectClaimKey("tasks.gone")))?.revision).toBe(rev);
    t = 62_000;
    await evictor.tick();
    expect((await store.get(subjectClaimKey("tasks.gone")))?.operation).toBe("DEL");
  });

  it("claims the subjects of types stored before claims existed, live types first", async () => {
    await addAgent("alpha");
    await addAgent("beta");
    await addInstance("beta", "b", 0);
    // Two types on one subject from the old, racy days: beta is live, so beta keeps it.
    const spec = decodeAgentRecord((await store.get(agentKey("alpha")))!.value)!.spec;
    await store.write(agentKey("alpha"), encodeRecord({ kind: "agent", spec: { ...spec, nats_subject: "tasks.beta" }, registered_at: 0, updated_at: 0 }), (await store.get(agentKey("alpha")))!.revision);
    await catchUp(store, view);
    evictor.start(0);
    t = 31_000;
    await evictor.tick();
    expect(decodeClaim((await store.get(subjectClaimKey("tasks.beta")))!.value)).toMatchObject({ agent_type: "beta", subject: "tasks.beta" });
  });

  describe("two clocks: heartbeats taken by a replica whose clock is off", () => {
    /** A registrar on another replica: its own view, its clock `skew` off the evictor's. */
    async function skewedReplica(skew: number) {
      const registrarView = new RegistryView({ now: () => t + skew });
      const registrar = new Registrar({
        store, view: registrarView, checker: new InlineSchemaChecks(), clock: { now: () => t + skew },
        settings: registrarSettings({ defaultHeartbeatIntervalMs: 1000, minHeartbeatIntervalMs: 100, maxHeartbeatIntervalMs: 120_000 }),
      });
      const spec = agentSpecSchema.parse({
        agent_type: "alpha", version: "1.0.0", description: "", owner_team: "t",
        capabilities: [{ name: "alpha.run", description: "", input_schema: {}, output_schema: {} }],
        nats_subject: "tasks.alpha", consumer_group: "alpha",
      });
      const settle = async () => {
        await catchUp(store, registrarView);
        await catchUp(store, view);
      };
      return {
        register: async (id: string, intervalMs = 1000) => {
          await registrar.register("alpha", { spec, instance_id: id, heartbeat_interval_ms: intervalMs });
          await settle();
        },
        heartbeat: async (id: string) => {
          await registrar.heartbeat("alpha", id, {});
          await settle();
        },
      };
    }

    for (const skew of [-60_000, -10_000, 10_000, 60_000]) {
      it(`${Math.abs(skew) / 1000} s ${skew < 0 ? "behind" : "ahead"}: the live instance stays, the stopped one goes a window after it was last heard`, async () => {
        const other = await skewedReplica(skew);
        await other.register("live");
        await other.register("stopped");
        evictor.start(0);
        for (t = 250; t <= 10_000; t += 250) {
          if (t % 500 === 0) await other.heartbeat("live");
          if (t % 500 === 0 && t <= 2000) await other.heartbeat("stopped");
          await evictor.tick();
          // Never before its deadline: heard last at 2,000 on the evictor's clock, window 3,000.
          if (t < 5000) expect(evicted).toEqual([]);
        }
        expect(evicted).toEqual([{ id: "stopped", lateness: 0 }]);
        expect(await record("alpha", "stopped")).toMatchObject({ kind: "gone", reason: "evicted", at: 5000, last_heartbeat: 2000 + skew });
        expect(await record("alpha", "live")).toMatchObject({ kind: "instance", last_heartbeat: 10_000 + skew });
      });
    }

    it("a new instance stamped 60 s ahead, written while passes are skipped, is still evicted on time", async () => {
      const other = await skewedReplica(60_000);
      // A slow instance puts the next pass 180 s away; the fast one written later must bring it closer.
      await other.register("slow", 60_000);
      evictor.start(0);
      await evictor.tick();
      t = 1000;
      await other.register("fast", 1000);
      for (t = 1000; t <= 5000; t += 250) await evictor.tick();
      expect(evicted).toEqual([{ id: "fast", lateness: 0 }]);
      expect(await record("alpha", "fast")).toMatchObject({ kind: "gone", at: 4000 });
    });
  });

  it("stops and reports active", () => {
    expect(evictor.active).toBe(false);
    evictor.start(0);
    expect(evictor.active).toBe(true);
    evictor.stop();
    expect(evictor.active).toBe(false);
  });
});
