/**
 * The lease on the in-memory store. Renewal ticks run on vitest's fake timers and the lease
 * reads a manual clock that the test moves in step with them.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { StoreUnavailableError, type StoreWriter } from "../../../../src/domain/ports.js";
import { LEASE_KEY } from "../../../../src/domain/model/records.js";
import { EvictorLease, readPublishedThrough } from "../../../../src/service/liveness/evictor-lease.js";
import { silentLogger, type Logger } from "../../../../src/kit/logger.js";
import { captureLogs } from "../../../harness/registry.js";

const LEASE_MS = 3000; // renewal period: 1000 ms
let t: number;
let store: MemoryStore;
const stops: Array<() => void> = [];

type Replica = { lease: EvictorLease; acquired: number[]; lost: string[] };

/** A replica: its lease, fed with lease entries by its own bucket watch, as view-feed does. */
async function replica(holder: string, writer: StoreWriter = store, log: Logger = silentLogger, publishedThrough?: () => number | null, hearing?: () => boolean): Promise<Replica> {
  const acquired: number[] = [];
  const lost: string[] = [];
  const lease = new EvictorLease({
    store: writer,
    clock: { now: () => t },
    log,
    holder,
    leaseMs: LEASE_MS,
    publishedThrough,
    hearing,
    listener: { onAcquired: (since) => acquired.push(since), onLost: (reason) => lost.push(reason) },
  });
  const watch = await store.watch(0);
  stops.push(() => watch.stop());
  void (async () => {
    for await (const e of watch) if (e.key === LEASE_KEY) lease.observe(e);
  })();
  return { lease, acquired, lost };
}

/** Moves the clock and the timers together, in steps of 100 ms. */
async function advance(ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 100) {
    const step = Math.min(100, ms - done);
    t += step;
    await vi.advanceTimersByTimeAsync(step);
  }
}

const holderOf = async (): Promise<string | null> => {
  const e = await store.get(LEASE_KEY);
  return e && e.operation === "PUT" ? (JSON.parse(new TextDecoder().decode(e.value)) as { holder: string }).holder : null;
};

beforeEach(() => {
  vi.useFakeTimers();
  t = 1_000_000;
  store = new MemoryStore();
});

afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
});

describe("EvictorLease", () => {
  it("elects exactly one of two replicas", async () => {
    const a = await replica("a");
    const b = await replica("b");
    a.lease.start();
    b.lease.start();
    await advance(5 * LEASE_MS);
    expect([a.lease.isLeader, b.lease.isLeader].filter(Boolean)).toHaveLength(1);
    expect(a.lease.isLeader).toBe(true);
    expect(a.acquired).toEqual([1_000_000]);
    expect(a.lease.since).toBe(1_000_000);
    expect(b.acquired).toEqual([]);
    expect(b.lease.holder).toBe("a");
    expect(await holderOf()).toBe("a");
    await a.lease.stop();
    await b.lease.stop();
  });

  it("keeps renewing, so a follower never takes over from a live leader", async () => {
    const a = await replica("a");
    a.lease.start();
    await advance(100);
    const b = await replica("b");
    b.lease.start();
    const before = (await store.get(LEASE_KEY))!.revision;
    await advance(10 * LEASE_MS);
    expect((await store.get(LEASE_KEY))!.revision).toBeGreaterThan(before + 20);
    expect(b.lease.isLeader).toBe(false);
    expect(a.lost).toEqual([]);
    await a.lease.stop();
    await b.lease.stop();
  });

  it("lets a follower take over only after a whole lease period of silence", async () => {
    const a = await replica("a");
    a.lease.start();
    await advance(100);
    const b = await replica("b");
    b.lease.start();
    await advance(2000);
    await a.lease.stop(); // dies: no more renewals, nothing released
    expect(a.lost).toEqual(["stopping"]);
    const lastRenewal = t - ((t - 1_000_000) % 1000);
    await advance(LEASE_MS - 1000);
    expect(b.lease.isLeader).toBe(false);
    await advance(2000);
    expect(b.lease.isLeader).toBe(true);
    expect(b.acquired).toHaveLength(1);
    expect(b.acquired[0]! - lastRenewal).toBeGreaterThanOrEqual(LEASE_MS);
    expect(await holderOf()).toBe("b");
    await b.lease.stop();
  });

  it("hands the lease over at once on release()", async () => {
    const a = await replica("a");
    a.lease.start();
    await advance(100);
    const b = await replica("b");
    b.lease.start();
    await advance(1500);
    const releasedAt = t;
    await a.lease.release();
    expect(a.lease.isLeader).toBe(false);
    await advance(1000); // one renewal period, well under the lease
    expect(b.lease.isLeader).toBe(true);
    expect(b.acquired[0]! - releasedAt).toBeLessThanOrEqual(1000);
    await b.lease.stop();
  });

  it("logs a shutdown's release at info and a lost lease as a warning", async () => {
    const quitting = captureLogs();
    const a = await replica("a", store, quitting.logger);
    a.lease.start();
    await advance(100);
    await a.lease.release();
    const gaveUp = (lines: typeof quitting.lines) => lines.filter((l) => l.msg === "gave up the evictor lease").map((l) => [l.level, l["reason"]]);
    expect(gaveUp(quitting.lines)).toEqual([[30, "stopping"]]);

    const losing = captureLogs();
    const b = await replica("b", store, losing.logger);
    b.lease.start();
    await advance(100);
    const current = (await store.get(LEASE_KEY))!;
    await store.write(LEASE_KEY, new TextEncoder().encode(JSON.stringify({ holder: "intruder" })), current.revision);
    await advance(100);
    expect(gaveUp(losing.lines)).toEqual([[40, "lease taken by intruder"]]);
    await b.lease.stop();
  });

  it("steps down when another holder's entry shows up", async () => {
    const a = await replica("a");
    a.lease.start();
    await advance(100);
    const current = (await store.get(LEASE_KEY))!;
    await store.write(LEASE_KEY, new TextEncoder().encode(JSON.stringify({ holder: "intruder" })), current.revision);
    await advance(100);
    expect(a.lease.isLeader).toBe(false);
    expect(a.lost).toEqual(["lease taken by intruder"]);
    await a.lease.stop();
  });

  it("steps down when it cannot renew for most of a period", async () => {
    let failing = false;
    const writer: StoreWriter = {
      write: (k, v, r) => (failing ? Promise.reject(new StoreUnavailableError("away")) : store.write(k, v, r)),
      remove: (k, r) => store.remove(k, r),
    };
    const a = await replica("a", writer);
    a.lease.start();
    await advance(100);
    expect(a.lease.isLeader).toBe(true);
    failing = true;
    await advance(1500);
    expect(a.lease.isLeader).toBe(true);
    await advance(1000);
    expect(a.lease.isLeader).toBe(false);
    expect(a.lost).toEqual(["could not renew the lease"]);
    await a.lease.stop();
  });

  it("neither renews nor claims while the replica hears no fleet, and steps down as when renewals fail", async () => {
    let hearing = true;
    const a = await replica("a", store, silentLogger, undefined, () => hearing);
    a.lease.start();
    await advance(100);
    expect(a.lease.isLeader).toBe(true);
    const renewed = (await store.get(LEASE_KEY))!.revision;
    hearing = false;
    await advance(1500);
    expect(a.lease.isLeader).toBe(true);
    expect((await store.get(LEASE_KEY))!.revision).toBe(renewed);
    await advance(1000);
    expect(a.lease.isLeader).toBe(false);
    expect(a.lost).toEqual(["the registry's connection to NATS is down"]);
    // Not claimed back, its own lease though it is, until it hears again.
    await advance(2 * LEASE_MS);
    expect(a.lease.isLeader).toBe(false);
    expect((await store.get(LEASE_KEY))!.revision).toBe(renewed);
    hearing = true;
    await advance(1100);
    expect(a.lease.isLeader).toBe(true);
    expect(a.acquired).toHaveLength(2);
    await a.lease.stop();
  });

  it("writes the publisher's watermark with its renewals and once more on release, readable after the delete", async () => {
    store = new MemoryStore(4);
    let mark: number | null = null;
    const a = await replica("a", store, silentLogger, () => mark);
    a.lease.start();
    await advance(100);
    // Not known yet: no field, and none to read.
    expect(await readPublishedThrough(store)).toBeNull();
    mark = 40;
    await advance(1000);
    expect(await readPublishedThrough(store)).toBe(40);
    // A backlog (null) repeats the last known value; it still holds.
    mark = null;
    await advance(1000);
    const last = await store.get(LEASE_KEY);
    expect(JSON.parse(new TextDecoder().decode(last!.value))).toMatchObject({ holder: "a", published_through: 40 });
    mark = 57;
    await a.lease.release();
    expect((await store.get(LEASE_KEY))!.operation).toBe("DEL");
    expect(await readPublishedThrough(store)).toBe(57);
  });

  it("reads no watermark from a lease of an older version or one that does not parse", async () => {
    store = new MemoryStore(4);
    const enc = new TextEncoder();
    const rev = await store.write(LEASE_KEY, enc.encode(JSON.stringify({ holder: "old", renewed_at: 1 })), 0);
    expect(await readPublishedThrough(store)).toBeNull();
    const rev2 = await store.write(LEASE_KEY, enc.encode("{not json"), rev);
    await store.write(LEASE_KEY, enc.encode(JSON.stringify({ holder: "x", published_through: "12" })), rev2);
    expect(await readPublishedThrough(store)).toBeNull();
  });
});
