/**
 * Memory liveness (docs/architecture.md, "Scale: heartbeats held in memory"): heartbeats
 * answered from the view, suspect marks as the arbiter between a heartbeat and an eviction.
 * One registry, a memory store and a manual clock: every interleaving of a heartbeat and the
 * evictor's writes is driven by hand.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { isPaused, judgeMemoryLiveness, type LivenessPolicy } from "../../../../src/domain/lifecycle/liveness.js";
import type { InstanceState } from "../../../../src/domain/model/model.js";
import { decodeInstanceRecord, encodeRecord, instanceKey, markedInstanceRecord } from "../../../../src/domain/model/records.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { Evictor } from "../../../../src/service/liveness/evictor.js";
import { silentLogger } from "../../../../src/kit/logger.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { catchUp, registrarSettings } from "../../fixtures.js";

const POLICY: LivenessPolicy = { missedHeartbeats: 3, selfPreservationRatio: 0 };
/** Interval 1 s, three missed: late (marked) after 1.5 s, evicted at 3 s. */
const INTERVAL = 1000;

let t: number;
let store: MemoryStore;
let view: RegistryView;
let registrar: Registrar;
let evictor: Evictor;
let memoryOn: boolean;
let told: Array<{ id: string; tasks: number | undefined }>;
let evicted: string[];
let marked: string[];

const spec = {
  agent_type: "alpha",
  version: "1.0.0",
  description: "alpha agent",
  owner_team: "team",
  capabilities: [{ name: "alpha.run", description: "runs", input_schema: {}, output_schema: {} }],
  nats_subject: "tasks.alpha",
  consumer_group: "alpha",
};

beforeEach(() => {
  t = 0;
  store = new MemoryStore();
  store.now = () => t;
  view = new RegistryView({ now: () => t });
  memoryOn = true;
  told = [];
  evicted = [];
  marked = [];
  registrar = new Registrar({
    store,
    view,
    checker: new InlineSchemaChecks(),
    clock: { now: () => t },
    settings: registrarSettings({ minHeartbeatIntervalMs: 100 }),
    catchUp: () => catchUp(store, view),
    memoryLiveness: { enabled: () => memoryOn, heard: (_type, id, tasks) => told.push({ id, tasks }) },
  });
  evictor = new Evictor({
    store,
    view,
    clock: { now: () => t },
    log: silentLogger,
    policy: POLICY,
    tickMs: 3_600_000,
    retentionMs: 3_600_000,
    stallMs: Number.POSITIVE_INFINITY,
    // Monotonic time runs with the manual clock: no step of the wall clock is seen.
    monotonic: () => t,
    liveness: "memory",
    hooks: { onEvicted: (i) => evicted.push(i.instance_id), onMarked: (i) => marked.push(i.instance_id) },
  });
});

async function register(id: string): Promise<void> {
  await registrar.register("alpha", { spec, instance_id: id, heartbeat_interval_ms: INTERVAL });
  await catchUp(store, view);
}

async function stored(id: string) {
  const e = await store.get(instanceKey("alpha", id));
  return e && e.operation === "PUT" ? decodeInstanceRecord(e.value) : null;
}

/** Moves the clock, applies what was written, runs one evictor pass and applies what it wrote. */
async function at(ms: number): Promise<void> {
  t = ms;
  await catchUp(store, view);
  await evictor.tick();
  await catchUp(store, view);
}

describe("heartbeats answered from memory", () => {
  it("writes nothing for a heartbeat that changes nothing durable, and tells the other replicas", async () => {
    await register("a");
    const before = await store.lastRevision();
    t = 500;
    const reply = await registrar.heartbeat("alpha", "a", { status: "ready", active_tasks: 3 });
    expect(reply.status).toBe("ready");
    expect(await store.lastRevision()).toBe(before);
    expect(told).toEqual([{ id: "a", tasks: 3 }]);
    const live = view.instance("alpha", "a")!;
    expect(live.observed_at).toBe(500);
    expect(live.active_tasks).toBe(3);
    expect(live.last_heartbeat).toBe(500);
  });

  it("writes a status change, and every heartbeat while memory liveness is off", async () => {
    await register("a");
    const before = await store.lastRevision();
    t = 100;
    await registrar.heartbeat("alpha", "a", { status: "draining" });
    expect(await store.lastRevision()).toBe(before + 1);
    expect(await stored("a")).toMatchObject({ status: "draining" });
    await catchUp(store, view);
    memoryOn = false;
    t = 200;
    await registrar.heartbeat("alpha", "a", {});
    expect(await store.lastRevision()).toBe(before + 2);
    expect(told).toEqual([]);
  });

  it("writes the heartbeat of an instance it has not heard for 1.5 intervals (a mark may be on its way)", async () => {
    await register("a");
    const before = await store.lastRevision();
    t = 1499;
    await registrar.heartbeat("alpha", "a", {});
    expect(await store.lastRevision()).toBe(before);
    t = 1499 + 1500;
    await registrar.heartbeat("alpha", "a", {});
    expect(await store.lastRevision()).toBe(before + 1);
  });

  it("answers unknown_instance for an instance the store does not hold", async () => {
    await register("a");
    await expect(registrar.heartbeat("alpha", "nobody", {})).rejects.toMatchObject({ code: "unknown_instance" });
  });
});

describe("suspect marks", () => {
  it("marks a silent instance at 1.5 intervals (a pass early) without counting it heard, and evicts it at its deadline", async () => {
    await register("a");
    evictor.start(0);
    // Late at 1,500; marked up to one pass (at most a quarter interval, 250 ms) before, so
    // that a pass's delay in writing the mark does not delay the eviction through the lead.
    await at(1249);
    expect(marked).toEqual([]);
    await at(1250);
    expect(marked).toEqual(["a"]);
    expect(await stored("a")).toMatchObject({ kind: "instance", status: "ready", suspect_since: 1250 });
    const live = view.instance("alpha", "a")!;
    expect(live).toMatchObject({ observed_at: 0, suspect_since: 1250, mark_seen_at: 1250 });
    await at(2999);
    expect(evicted).toEqual([]);
    await at(3000);
    expect(evicted).toEqual(["a"]);
    expect(await stored("a")).toMatchObject({ kind: "gone", reason: "evicted" });
  });

  it("waits the lead after the mark was applied: a mark seen late pushes the eviction back, never forward", async () => {
    await register("a");
    evictor.start(0);
    t = 1500;
    await evictor.tick();
    // The view applies the mark only at 2,500: the eviction waits until 2,500 + 1.5 intervals.
    t = 2500;
    await catchUp(store, view);
    await at(3000);
    expect(evicted).toEqual([]);
    await at(3999);
    expect(evicted).toEqual([]);
    await at(4000);
    expect(evicted).toEqual(["a"]);
  });

  it("writes a mark once while the view has not applied it", async () => {
    await register("a");
    evictor.start(0);
    t = 1500;
    await evictor.tick();
    const after = await store.lastRevision();
    t = 1750;
    await evictor.tick();
    expect(await store.lastRevision()).toBe(after);
    expect(marked).toEqual(["a"]);
  });

  it("keeps an instance heard from memory: no mark, no write, no eviction", async () => {
    await register("a");
    evictor.start(0);
    const before = await store.lastRevision();
    for (let ms = 1000; ms <= 10_000; ms += 1000) {
      t = ms;
      await registrar.heartbeat("alpha", "a", {});
      await at(ms + 10);
    }
    expect(marked).toEqual([]);
    expect(evicted).toEqual([]);
    expect(await store.lastRevision()).toBe(before);
  });

  it("a heartbeat to a marked instance writes a clear, which counts as hearing it and wins against the tombstone", async () => {
    await register("a");
    evictor.start(0);
    await at(1500);
    const mark = await store.get(instanceKey("alpha", "a"));
    t = 2900;
    await registrar.heartbeat("alpha", "a", {});
    const cleared = await stored("a");
    expect(cleared).toMatchObject({ kind: "instance", last_heartbeat: 2900 });
    expect(cleared).not.toHaveProperty("suspect_since");
    expect((await store.get(instanceKey("alpha", "a")))!.revision).toBeGreaterThan(mark!.revision);
    // The evictor judged before the clear was applied: its tombstone expects the mark's revision and fails.
    t = 3000;
    await evictor.tick();
    expect(evicted).toEqual([]);
    await catchUp(store, view);
    expect(view.instance("alpha", "a")).toMatchObject({ suspect_since: null, mark_seen_at: 0, observed_at: 3000 });
    await at(4400);
    expect(evicted).toEqual([]);
  });

  it("a heartbeat that comes after the tombstone is told unknown_instance", async () => {
    await register("a");
    evictor.start(0);
    await at(1500);
    t = 3000;
    await evictor.tick();
    expect(evicted).toEqual(["a"]);
    // The view has not applied the tombstone: it still holds the mark, so the heartbeat is
    // written, its compare-and-set fails, and the store's copy says the instance is gone.
    t = 3010;
    const err = await Promise.resolve(registrar.heartbeat("alpha", "a", {})).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect(err).toMatchObject({ code: "unknown_instance" });
  });

  it("a view applying a mark keeps the last heartbeat it heard, newer than the evictor's copy", async () => {
    await register("a");
    t = 1000;
    view.heard("alpha", "a", 1000, undefined);
    const live = view.instance("alpha", "a")!;
    const current = await store.get(instanceKey("alpha", "a"));
    await store.write(instanceKey("alpha", "a"), encodeRecord(markedInstanceRecord({ ...live, last_heartbeat: 0 }, 1200)), current!.revision);
    t = 1300;
    await catchUp(store, view);
    expect(view.instance("alpha", "a")).toMatchObject({ last_heartbeat: 1000, observed_at: 1000, suspect_since: 1200, mark_seen_at: 1300 });
    expect(view.heard("alpha", "nobody", 1300, undefined)).toBe(false);
  });
});

describe("judgeMemoryLiveness", () => {
  const inst = (id: string, extra: Partial<InstanceState> = {}): InstanceState => ({
    agent_type: "alpha",
    instance_id: id,
    version: "1.0.0",
    status: "ready",
    registered_at: 0,
    last_heartbeat: 0,
    heartbeat_interval_ms: INTERVAL,
    active_tasks: 0,
    metadata: {},
    revision: 1,
    observed_at: 0,
    suspect_since: null,
    mark_seen_at: 0,
    ...extra,
  });

  it("counts marks and deadlines from the grace start, and never judges the static entry", () => {
    expect(judgeMemoryLiveness(inst("a"), 1600, 1000, POLICY)).toEqual({ late: false, action: null, at: 2500 });
    expect(judgeMemoryLiveness(inst("static"), 1600, 1000, POLICY)).toBeNull();
  });

  it("says when the next mark or eviction can come", () => {
    // a is late at 2,000; b, marked, is due at max(3,000, 1,800 + 1,500).
    expect(judgeMemoryLiveness(inst("a", { observed_at: 500 }), 1600, 0, POLICY)).toEqual({ late: false, action: null, at: 2000 });
    const b = inst("b", { suspect_since: 1500, mark_seen_at: 1800 });
    expect(judgeMemoryLiveness(b, 1600, 0, POLICY)).toEqual({ late: true, action: null, at: 3300 });
    expect(judgeMemoryLiveness(b, 3000, 0, POLICY)).toEqual({ late: true, action: null, at: 3300 });
    expect(judgeMemoryLiveness(b, 3300, 0, POLICY)).toEqual({ late: true, action: "evict", at: 3300 });
  });

  it("looks again at a mark applied ahead of late when the instance turns late", () => {
    // Marked at 1,250 (a pass ahead), seen at 1,300: late at 1,500, due at max(3,000, 2,800).
    const a = inst("a", { suspect_since: 1250, mark_seen_at: 1300 });
    expect(judgeMemoryLiveness(a, 1300, 0, POLICY, 250)).toEqual({ late: false, action: null, at: 1500 });
    expect(judgeMemoryLiveness(a, 1500, 0, POLICY, 250)).toEqual({ late: true, action: null, at: 3000 });
  });

  it("marks up to one pass early, never more than a quarter interval", () => {
    expect(judgeMemoryLiveness(inst("a"), 1250, 0, POLICY, 250)).toEqual({ late: false, action: "mark", at: 1250 });
    expect(judgeMemoryLiveness(inst("a"), 1249, 0, POLICY, 250)).toEqual({ late: false, action: null, at: 1250 });
    // A 100 ms interval is late at 150 ms: marked at 125, not at once.
    expect(judgeMemoryLiveness(inst("a", { heartbeat_interval_ms: 100 }), 0, 0, POLICY, 250)).toEqual({ late: false, action: null, at: 125 });
  });
});

describe("isPaused (self-preservation)", () => {
  const policy: LivenessPolicy = { missedHeartbeats: 3, selfPreservationRatio: 0.5 };

  it("holds marks and evictions back while more than the ratio of at least ten live instances is late", () => {
    expect(isPaused(policy, 20, 15, 15 / 20)).toBe(true);
    expect(isPaused(policy, 20, 10, 10 / 20)).toBe(false);
    expect(isPaused(policy, 9, 9, 1)).toBe(false);
    expect(isPaused(policy, 20, 0, 1)).toBe(false);
    expect(isPaused({ ...policy, selfPreservationRatio: 0 }, 20, 20, 1)).toBe(false);
  });
});

describe("the evictor's schedule (check-wheel.ts)", () => {
  /** An evictor with a 100 ms tick, so the wheel has slots finer than the interval. */
  const fineEvictor = (policy: LivenessPolicy = POLICY) =>
    new Evictor({
      store, view, clock: { now: () => t }, log: silentLogger, policy, tickMs: 100, retentionMs: 3_600_000, stallMs: Number.POSITIVE_INFINITY,
      monotonic: () => t, liveness: "memory",
      hooks: { onEvicted: (i) => evicted.push(i.instance_id), onMarked: (i) => marked.push(i.instance_id) },
    });

  it("after its first pass, looks at no instance while none can turn late", async () => {
    for (let k = 0; k < 20; k++) await register(`i${k}`);
    evictor = fineEvictor();
    evictor.start(0);
    evictor.stop();
    await at(0);
    let passes = 0;
    const all = view.all.bind(view);
    view.all = () => {
      passes++;
      return all();
    };
    for (let ms = 100; ms <= 5000; ms += 100) {
      // Every instance heartbeats each second, answered from memory.
      if (ms % 1000 === 0) for (let k = 0; k < 20; k++) await registrar.heartbeat("alpha", `i${k}`, {});
      await at(ms);
    }
    expect(passes).toBe(0);
    expect(marked).toEqual([]);
    expect(evicted).toEqual([]);
  });

  it("marks and evicts the instance that stopped, at its times, while the others heartbeat", async () => {
    await register("a");
    await register("b");
    evictor = fineEvictor();
    evictor.start(0);
    evictor.stop();
    const markedAt: number[] = [];
    const evictedAt: number[] = [];
    for (let ms = 0; ms <= 4000; ms += 100) {
      if (ms > 0 && ms % 1000 === 0) await registrar.heartbeat("alpha", "a", {});
      const m = marked.length;
      const e = evicted.length;
      await at(ms);
      if (marked.length > m) markedAt.push(ms);
      if (evicted.length > e) evictedAt.push(ms);
    }
    // Late at 1.5 s, marked ahead by a tick and the apply allowance, at most a quarter
    // interval: at 1.25 s, on the first pass after it; deadline 3 s: evicted on the first pass at it.
    expect(marked).toEqual(["b"]);
    expect(markedAt).toEqual([1300]);
    expect(evicted).toEqual(["b"]);
    expect(evictedAt).toEqual([3000]);
  });

  it("judges an instance from its latest write: a mark cleared by a heartbeat's write puts it back on its interval", async () => {
    await register("a");
    evictor = fineEvictor();
    evictor.start(0);
    evictor.stop();
    for (let ms = 0; ms <= 1400; ms += 100) await at(ms);
    expect(marked).toEqual(["a"]);
    // The heartbeat of a marked instance is written, and the write clears the mark.
    t = 1450;
    await registrar.heartbeat("alpha", "a", {});
    for (let ms = 1500; ms <= 2600; ms += 100) await at(ms);
    expect(await stored("a")).toMatchObject({ last_heartbeat: 1450 });
    expect(marked).toEqual(["a"]);
    // Not heard again: marked again a quarter interval before 1450 + 1500, evicted at 1450 + 3000.
    for (let ms = 2700; ms <= 4500; ms += 100) await at(ms);
    expect(marked).toEqual(["a", "a"]);
    expect(evicted).toEqual(["a"]);
  });

  it("spreads the looks that follow a start over the half interval before the first marks, instead of one pass at them", async () => {
    for (let k = 0; k < 20; k++) await register(`i${k}`);
    evictor = fineEvictor();
    // The lease taken after the load: every instance is judged by the grace start.
    evictor.start(10);
    evictor.stop();
    await at(100);
    const instance = view.instance.bind(view);
    let looked = 0;
    view.instance = (agentType, instanceId) => {
      looked++;
      return instance(agentType, instanceId);
    };
    const lookedAt = new Map<number, number>();
    for (let ms = 200; ms <= 1400; ms += 100) {
      // Every instance but the last heartbeats once, answered from memory.
      if (ms === 600) for (let k = 0; k < 19; k++) await registrar.heartbeat("alpha", `i${k}`, {});
      looked = 0;
      await at(ms);
      if (looked > 0) lookedAt.set(ms, looked);
    }
    // Filed for 10 + 1.5 s - a quarter interval = 1260 ms, all twenty would be looked at in the
    // pass at 1300; spread from one interval after the pass (1100 ms) up to that time.
    expect([...lookedAt.keys()].filter((ms) => ms < 1300)).not.toEqual([]);
    expect(Math.max(...lookedAt.values())).toBeLessThan(20);
    // The one that did not heartbeat is marked on time; those heard are filed by their heartbeat.
    expect(marked).toEqual(["i19"]);
  });

  describe("a pass over more instances than a slice", () => {
    /** An evictor whose timer runs (its tick is an hour: the tests call tick) and that looks at five instances a turn. */
    const slicedEvictor = () => {
      const e = new Evictor({
        store, view, clock: { now: () => t }, log: silentLogger, policy: POLICY, tickMs: 3_600_000, retentionMs: 3_600_000,
        stallMs: Number.POSITIVE_INFINITY, monotonic: () => t, liveness: "memory", lookSlice: 5,
        hooks: { onEvicted: (i) => evicted.push(i.instance_id), onMarked: (i) => marked.push(i.instance_id) },
      });
      e.start(0);
      return e;
    };
    /** Runs one pass at `ms`, calling `meanwhile` on the first turn of the event loop the pass gives back; counts those turns. */
    async function passAt(ms: number, meanwhile?: () => void): Promise<number> {
      t = ms;
      await catchUp(store, view);
      let turns = 0;
      let over = false;
      const turn = (): void => {
        if (over) return;
        if (turns++ === 0) meanwhile?.();
        setImmediate(turn);
      };
      setImmediate(turn);
      await evictor.tick();
      over = true;
      await catchUp(store, view);
      return turns;
    }

    it("gives the event loop back between slices, and marks every late instance", async () => {
      for (let k = 0; k < 20; k++) await register(`i${k}`);
      evictor = slicedEvictor();
      try {
        // The first pass looks at all twenty, four slices: nothing is late yet.
        expect(await passAt(0)).toBeGreaterThanOrEqual(3);
        // Late at 1.5 s, marked up to a quarter interval ahead: every one is due for its mark.
        expect(await passAt(1300)).toBeGreaterThanOrEqual(3);
        expect([...marked].sort()).toEqual(Array.from({ length: 20 }, (_, k) => `i${k}`).sort());
      } finally {
        evictor.stop();
      }
    });

    it.each([
      ["the lease is lost (the evictor stopped)", () => evictor.stop()],
      ["a store write failed (a new grace window)", () => evictor.storeUnavailable(t)],
      ["the NATS connection dropped", () => evictor.disconnected()],
    ])("acts on nothing it judged when, meanwhile, %s", async (_what, meanwhile) => {
      for (let k = 0; k < 20; k++) await register(`i${k}`);
      evictor = slicedEvictor();
      try {
        await passAt(0);
        const before = await store.lastRevision();
        await passAt(1300, meanwhile);
        expect(marked).toEqual([]);
        expect(await store.lastRevision()).toBe(before);
      } finally {
        evictor.stop();
      }
    });

    it("makes a full pass cut short whole again on the next pass", async () => {
      for (let k = 0; k < 20; k++) await register(`i${k}`);
      evictor = slicedEvictor();
      try {
        // A store failure during the first pass: its filing is not trusted, the next pass looks at every instance again.
        await passAt(0, () => evictor.storeUnavailable(10));
        let passes = 0;
        const all = view.all.bind(view);
        view.all = () => {
          passes++;
          return all();
        };
        await passAt(100);
        expect(passes).toBe(1);
        // Heard by nobody since: all marked a quarter interval before 10 ms + 1.5 s.
        await passAt(1400);
        expect(marked).toHaveLength(20);
      } finally {
        evictor.stop();
      }
    });
  });

  it("counts the late for self-preservation from the instances it found late, and holds evictions back", async () => {
    for (let k = 0; k < 20; k++) await register(`i${k}`);
    const turns: boolean[] = [];
    evictor = new Evictor({
      store, view, clock: { now: () => t }, log: silentLogger, policy: { missedHeartbeats: 3, selfPreservationRatio: 0.5 }, tickMs: 100, retentionMs: 3_600_000,
      stallMs: Number.POSITIVE_INFINITY, monotonic: () => t, liveness: "memory",
      hooks: { onEvicted: (i) => evicted.push(i.instance_id), onMarked: (i) => marked.push(i.instance_id), onSelfPreservation: (active) => turns.push(active) },
    });
    evictor.start(0);
    evictor.stop();
    // Twelve of twenty stop: 60% late, over the 50% ratio. Their marks go out a tick before
    // they count as late (as with a pass over the fleet); their evictions are held back.
    for (let ms = 0; ms <= 4000; ms += 100) {
      if (ms > 0 && ms % 1000 === 0) for (let k = 12; k < 20; k++) await registrar.heartbeat("alpha", `i${k}`, {});
      await at(ms);
    }
    expect(turns).toEqual([true]);
    expect(marked).toHaveLength(12);
    expect(evicted).toEqual([]);
    // They come back: self-preservation ends, and nothing is evicted in the new window.
    for (let k = 0; k < 12; k++) await registrar.heartbeat("alpha", `i${k}`, {});
    for (let ms = 4100; ms <= 5000; ms += 100) {
      if (ms % 1000 === 0) for (let k = 0; k < 20; k++) await registrar.heartbeat("alpha", `i${k}`, {});
      await at(ms);
    }
    expect(turns).toEqual([true, false]);
    expect(evicted).toEqual([]);
  });
});
