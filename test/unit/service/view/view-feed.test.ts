import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { eventId, type StoreEvent } from "../../../../src/domain/view/events.js";
import type { StoreEntry, StoreReader, StoreWatch } from "../../../../src/domain/ports.js";
import { agentKey, encodeRecord, instanceKey, LEASE_KEY, type LiveInstanceRecord } from "../../../../src/domain/model/records.js";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { encodeClaim, subjectClaimKey } from "../../../../src/domain/model/subject-claims.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { silentLogger } from "../../../../src/kit/logger.js";
import { ViewFeed, type ViewFeedDeps } from "../../../../src/service/view/view-feed.js";
import { waitFor } from "../../../harness/wait.js";

let store: MemoryStore;
let view: RegistryView;
let events: StoreEvent[];
let reserved: StoreEntry[];
let restarts: string[];
let feed: ViewFeed | null;

const live = (status: LiveInstanceRecord["status"] = "ready"): LiveInstanceRecord => ({
  kind: "instance", version: "1.0.0", status, registered_at: 0, last_heartbeat: 0,
  heartbeat_interval_ms: 1000, active_tasks: 0, metadata: {}, spec_changed: false,
});

async function addAgent(type: string): Promise<number> {
  const spec = agentSpecSchema.parse({
    agent_type: type, version: "1.0.0", description: "", owner_team: "t",
    capabilities: [{ name: `${type}.run`, description: "", input_schema: {}, output_schema: {} }],
    nats_subject: `tasks.${type}`, consumer_group: type,
  });
  return store.write(agentKey(type), encodeRecord({ kind: "agent", spec, registered_at: 0, updated_at: 0 }), 0);
}
const addInstance = (type: string, id: string): Promise<number> => store.write(instanceKey(type, id), encodeRecord(live()), 0);

function startFeed(reader: StoreReader = store, extra: Partial<ViewFeedDeps> = {}): ViewFeed {
  feed = new ViewFeed({
    store: reader,
    view,
    log: silentLogger,
    onEvents: (evs) => events.push(...evs),
    onReserved: (e) => reserved.push(e),
    onRestart: (reason) => restarts.push(reason),
    ...extra,
  });
  return feed;
}

const ids = (): string[] => events.map((e) => eventId(e.revision, e.index));

beforeEach(() => {
  store = new MemoryStore();
  view = new RegistryView();
  events = [];
  reserved = [];
  restarts = [];
  feed = null;
});

afterEach(async () => {
  await feed?.stop();
});

describe("ViewFeed", () => {
  it("loads what the store holds without emitting its events", async () => {
    await addAgent("alpha");
    await addInstance("alpha", "i1");
    await addInstance("alpha", "i2");
    const f = startFeed();
    expect(f.loaded).toBe(false);
    await f.start();
    await f.whenLoaded();
    expect(f.loaded).toBe(true);
    expect(view.revision).toBe(3);
    expect(view.get("alpha")?.instances.size).toBe(2);
    expect(events).toEqual([]);
  });

  it("is loaded at once on an empty store", async () => {
    const f = startFeed();
    await f.start();
    expect(f.loaded).toBe(true);
    await f.whenLoaded();
  });

  it("emits the events of changes after the load, in store order", async () => {
    await addAgent("alpha");
    const f = startFeed();
    await f.start();
    await f.whenLoaded();
    const rev = await addInstance("alpha", "i1");
    expect(await f.waitForRevision(rev, 2000)).toBe("reached");
    expect(events.map((e) => e.type)).toEqual(["registry.agent.registered", "registry.capability.changed"]);
    expect(ids()).toEqual([`${rev}-0`, `${rev}-1`]);
  });

  it("becomes loaded, and goes on, when applying the last entry of the load throws", async () => {
    await addAgent("alpha");
    await addAgent("boom");
    // A listener that throws stands for any bug on the apply path: before, the watch ended on
    // it, resumed past it, and the view was never marked loaded (the replica never ready).
    view.addListener({ update: (type) => { if (type === "boom") throw new Error("listener bug"); } });
    const unreadable: number[] = [];
    const f = startFeed(store, { onUnreadable: () => unreadable.push(view.revision) });
    await f.start();
    await waitFor(() => f.loaded, { message: "loaded" });
    expect(unreadable).toEqual([2]);
    await addAgent("gamma");
    await waitFor(() => view.get("gamma") !== undefined, { message: "later entries applied" });
    expect(restarts).toEqual([]);
  });

  it("passes reserved keys on and counts their revisions", async () => {
    const f = startFeed();
    await f.start();
    const rev = await store.write(LEASE_KEY, new TextEncoder().encode('{"holder":"x"}'), 0);
    expect(await f.waitForRevision(rev, 2000)).toBe("reached");
    expect(reserved.map((e) => e.key)).toEqual([LEASE_KEY]);
    expect(view.revision).toBe(rev);
    expect(events).toEqual([]);
  });

  it("keeps subject claims in the view and never hands them to the lease", async () => {
    const f = startFeed();
    await f.start();
    const key = subjectClaimKey("tasks.alpha");
    const record = { kind: "subject_claim" as const, subject: "tasks.alpha", agent_type: "alpha", tenant_scope: null, at: 0 };
    const put = await store.write(key, encodeClaim(record), 0);
    expect(await f.waitForRevision(put, 2000)).toBe("reached");
    expect(view.claims.forSubject("tasks.alpha")).toEqual({ record, revision: put });
    await store.remove(key, put);
    expect(await f.waitForRevision(put + 1, 2000)).toBe("reached");
    expect(view.claims.size).toBe(0);
    expect(reserved).toEqual([]);
    expect(events).toEqual([]);
  });

  it("waitForRevision resolves at once when reached and timed_out on timeout", async () => {
    await addAgent("alpha");
    const f = startFeed();
    await f.start();
    await f.whenLoaded();
    expect(await f.waitForRevision(1, 10)).toBe("reached");
    const started = Date.now();
    expect(await f.waitForRevision(99, 50)).toBe("timed_out");
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it("answers pending waits with timed_out when it stops", async () => {
    const f = startFeed();
    await f.start();
    const pending = f.waitForRevision(10, 60_000);
    await f.stop();
    expect(await pending).toBe("timed_out");
  });

  it("resumes after a restart from what it applied, without duplicates", async () => {
    await addAgent("alpha");
    const f = startFeed();
    await f.start();
    await f.whenLoaded();
    await addInstance("alpha", "i1");
    f.restart("test");
    await addInstance("alpha", "i2");
    const last = await addInstance("alpha", "i3");
    expect(await f.waitForRevision(last, 3000)).toBe("reached");
    expect(restarts).toEqual(["test"]);
    const registered = events.filter((e) => e.type === "registry.agent.registered").map((e) => e.revision);
    expect(registered).toEqual([2, 3, 4]);
    expect(new Set(ids()).size).toBe(events.length);
  });

  it("applies nothing twice when a resumed watch overlaps what was applied", async () => {
    // A store whose watches always replay from the start, as a sloppy resume would.
    const replaying: StoreReader = { get: (k) => store.get(k), lastRevision: () => store.lastRevision(), watch: () => store.watch(0) };
    await addAgent("alpha");
    const f = startFeed(replaying);
    await f.start();
    await f.whenLoaded();
    await addInstance("alpha", "i1");
    await waitFor(() => events.length === 2);
    f.restart("overlap");
    const last = await addInstance("alpha", "i2");
    expect(await f.waitForRevision(last, 3000)).toBe("reached");
    expect(ids()).toEqual(["2-0", "2-1", "3-0"]);
  });

  it("restarts a watch that stalls behind the store", async () => {
    let calls = 0;
    const stalling: StoreReader = {
      get: (k) => store.get(k),
      lastRevision: () => store.lastRevision(),
      watch: async (after): Promise<StoreWatch> => {
        if (++calls > 1) return store.watch(after);
        // The first watch never delivers anything, like a consumer the server lost.
        let wake: () => void = () => {};
        const stopped = new Promise<void>((resolve) => (wake = resolve));
        return {
          stop: () => wake(),
          [Symbol.asyncIterator]: () => ({
            next: async (): Promise<IteratorResult<StoreEntry>> => {
              await stopped;
              return { done: true, value: undefined };
            },
          }),
        };
      },
    };
    const lags: number[] = [];
    await addAgent("alpha");
    const f = startFeed(stalling, { checkIntervalMs: 20, onLag: (lag) => lags.push(lag) });
    await f.start();
    await f.whenLoaded();
    expect(restarts[0]).toMatch(/^watch stalled 1 revisions behind/);
    expect(lags).toContain(1);
    expect(view.get("alpha")).toBeDefined();
    expect(calls).toBe(2);
  });

  /** A reader whose first watch takes until `release()` to be created, as a server positioning a consumer over a million keys. */
  function slowToWatch() {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const made: StoreWatch[] = [];
    let calls = 0;
    const reader: StoreReader = {
      get: (k) => store.get(k),
      lastRevision: () => store.lastRevision(),
      watch: async (after): Promise<StoreWatch> => {
        if (++calls === 1) await released;
        const w = await store.watch(after);
        let stopped = false;
        made.push(w);
        return Object.assign(w, { stopped: () => stopped, stop: ((inner) => () => ((stopped = true), inner()))(w.stop.bind(w)) });
      },
    };
    return { reader, release, made: made as Array<StoreWatch & { stopped(): boolean }>, calls: () => calls };
  }

  it("does not take a watch still being created for a stalled one", async () => {
    await addAgent("alpha");
    const slow = slowToWatch();
    const f = startFeed(slow.reader, { checkIntervalMs: 10 });
    await f.start();
    // Many lag checks pass while the creation is pending: none restarts it.
    await new Promise((r) => setTimeout(r, 150));
    expect(restarts).toEqual([]);
    slow.release();
    await f.whenLoaded();
    expect(view.get("alpha")).toBeDefined();
    expect(slow.calls()).toBe(1);
  });

  it("stops without waiting for a watch being created, and stops that watch once it is", async () => {
    await addAgent("alpha");
    const slow = slowToWatch();
    const f = startFeed(slow.reader);
    await f.start();
    await new Promise((r) => setTimeout(r, 20));
    await f.stop();
    feed = null;
    slow.release();
    await waitFor(() => slow.made.length === 1 && slow.made[0]!.stopped(), { message: "the late watch stopped" });
  });

  it("gives up a watch being created when restarted (a request lost with the connection must not hold the feed), and stops it if it comes", async () => {
    await addAgent("alpha");
    const slow = slowToWatch();
    const f = startFeed(slow.reader);
    await f.start();
    await new Promise((r) => setTimeout(r, 20));
    f.restart("reconnected");
    // A second watch at once, not after the first creation answers.
    await f.whenLoaded();
    expect(slow.calls()).toBe(2);
    expect(view.get("alpha")).toBeDefined();
    slow.release();
    await waitFor(() => slow.made.length === 2 && slow.made[1]!.stopped(), { message: "the abandoned watch stopped when it came" });
    expect(slow.made[0]!.stopped()).toBe(false);
  });

  describe("reload", () => {
    /** A store reader that can be pointed at another store and made to fail lastRevision. */
    function switchable(initial: MemoryStore) {
      const r = { target: initial, failLastRevision: 0 };
      const reader: StoreReader = {
        get: (k) => r.target.get(k),
        watch: (after) => r.target.watch(after),
        lastRevision: () => {
          if (r.failLastRevision > 0) {
            r.failLastRevision--;
            return Promise.reject(new Error("store away"));
          }
          return r.target.lastRevision();
        },
      };
      return { r, reader };
    }

    it("rebuilds the view when the store's revision goes back, without emitting the reload", async () => {
      await addAgent("alpha");
      await addAgent("beta");
      await addInstance("beta", "b1");
      const { r, reader } = switchable(store);
      const f = startFeed(reader, { checkIntervalMs: 20 });
      await f.start();
      await f.whenLoaded();
      expect(view.get("beta")).toBeDefined();
      // The store comes back without its last writes.
      const survivor = store;
      store = new MemoryStore();
      await addAgent("alpha");
      r.target = store;
      await waitFor(() => view.get("beta") === undefined && f.loaded && view.revision === 1);
      expect(events).toEqual([]);
      expect(survivor).not.toBe(store);
      const rev = await addInstance("alpha", "a1");
      expect(await f.waitForRevision(rev, 2000)).toBe("reached");
      expect(events.map((e) => e.type)).toEqual(["registry.agent.registered", "registry.capability.changed"]);
    });

    it("does not reload when writes land while the lag check reads the store", async () => {
      const slow: StoreReader = {
        get: (k) => store.get(k),
        watch: (after) => store.watch(after),
        lastRevision: async () => {
          const last = await store.lastRevision();
          await new Promise((resolve) => setTimeout(resolve, 30));
          return last;
        },
      };
      await addAgent("alpha");
      const f = startFeed(slow, { checkIntervalMs: 10 });
      await f.start();
      await f.whenLoaded();
      const cleared = vi.spyOn(view, "clear");
      for (let i = 0; i < 40; i++) {
        await addInstance("alpha", `i${i}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(cleared).not.toHaveBeenCalled();
    });

    it("emits nothing for the reloaded entries", async () => {
      await addAgent("alpha");
      await addInstance("alpha", "i1");
      const f = startFeed();
      await f.start();
      await f.whenLoaded();
      f.reload("test");
      await waitFor(() => f.loaded && view.revision === 2);
      expect(view.get("alpha")?.status).toBe("ready");
      expect(events).toEqual([]);
    });

    it("emits nothing for the reloaded entries when the first store read fails", async () => {
      await addAgent("alpha");
      await addInstance("alpha", "i1");
      const { r, reader } = switchable(store);
      const f = startFeed(reader);
      await f.start();
      await f.whenLoaded();
      r.failLastRevision = 1;
      f.reload("test");
      await waitFor(() => view.revision === 2 && r.failLastRevision === 0, { timeoutMs: 3000 });
      expect(events).toEqual([]);
    });
  });
});

