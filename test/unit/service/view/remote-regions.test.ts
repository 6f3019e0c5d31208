import { afterEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { silentLogger } from "../../../../src/kit/logger.js";
import { RemoteRegions, type MirrorStatus, type RegionSource } from "../../../../src/service/view/remote-regions.js";
import { waitFor } from "../../../harness/wait.js";

/** A mirror double: the memory store as the bucket, and a contact age the test sets. */
function mirrorOf(store: MemoryStore, status: { sinceContactMs: number | null; fails?: boolean }): RegionSource {
  return Object.assign(Object.create(store) as MemoryStore, {
    progress: async (): Promise<MirrorStatus> => {
      if (status.fails === true) throw new Error("mirror away");
      return { lastRevision: await store.lastRevision(), sinceContactMs: status.sinceContactMs };
    },
  });
}

describe("RemoteRegions", () => {
  let remote: RemoteRegions | null = null;
  afterEach(async () => remote?.stop());

  it("marks a region stale only past the bound, keeps it so while its mirror is away, and fresh again once heard from", async () => {
    let now = 1_000_000;
    const store = new MemoryStore();
    const status: { sinceContactMs: number | null; fails?: boolean } = { sinceContactMs: 0 };
    const view = new RegistryView({ now: () => now });
    remote = new RemoteRegions({ regions: [{ name: "us", source: mirrorOf(store, status), view }], log: silentLogger, now: () => now, staleAfterMs: 5_000, checkIntervalMs: 10 });
    await remote.start();
    expect(remote.regions).toMatchObject([{ name: "us", view, stale: false, revision: 0 }]);

    // Silent for less than the bound: not stale.
    await new Promise((r) => setTimeout(r, 50));
    now += 4_000;
    status.sinceContactMs = 4_000;
    await new Promise((r) => setTimeout(r, 50));
    expect(remote.regions[0]!.stale).toBe(false);
    // Past it: stale, and the mirror failing to answer does not clear it.
    now += 2_000;
    status.sinceContactMs = 6_000;
    await waitFor(() => remote!.regions[0]!.stale, { message: "stale past the bound" });
    status.fails = true;
    now += 1_000;
    await new Promise((r) => setTimeout(r, 50));
    expect(remote.regions[0]!.stale).toBe(true);
    // Heard from again: fresh.
    status.fails = false;
    status.sinceContactMs = 100;
    await waitFor(() => !remote!.regions[0]!.stale, { message: "fresh once heard from" });
  });

  it("a mirror that never heard from its region goes stale once the bound has passed since the start", async () => {
    let now = 0;
    const view = new RegistryView({ now: () => now });
    remote = new RemoteRegions({ regions: [{ name: "ap", source: mirrorOf(new MemoryStore(), { sinceContactMs: null }), view }], log: silentLogger, now: () => now, staleAfterMs: 5_000, checkIntervalMs: 10 });
    await remote.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(remote.regions[0]!.stale).toBe(false);
    now = 6_000;
    await waitFor(() => remote!.regions[0]!.stale, { message: "stale after the bound without contact" });
  });
});
