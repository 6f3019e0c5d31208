/**
 * The lease on the in-memory store. Renewal ticks run on vitest's fake timers and the lease
 * reads a manual clock that the test moves in step with them.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryStore } from "../../src/adapters/memory/memory-store.js";
import { StoreUnavailableError, type StoreWriter } from "../../src/domain/ports.js";
import { LEASE_KEY } from "../../src/domain/records.js";
import { EvictorLease } from "../../src/service/evictor-lease.js";
import { silentLogger } from "../../src/service/logger.js";

const LEASE_MS = 3000; // renewal period: 1000 ms
let t: number;
let store: MemoryStore;
const stops: Array<() => void> = [];

type Replica = { lease: EvictorLease; acquired: number[]; lost: string[] };

/** A replica: its lease, fed with lease entries by its own bucket watch, as view-feed does. */
async function replica(holder: string, writer: StoreWriter = store): Promise<Replica> {
  const acquired: number[] = [];
  const lost: string[] = [];
  const lease = new EvictorLease({
    store: writer,
    clock: { now: () => t },
    log: silentLogger,
    holder,
    leaseMs: LEASE_MS,
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
});
