/**
 * The rules every Store implementation keeps (domain/ports.ts), written once and run against
 * the in-memory double (test/unit/adapters/memory/memory-store.test.ts) and the JetStream KV adapter
 * (test/integration/kv-store.test.ts), so unit tests on the double say something about
 * production. `makeStore` must give an empty store each time.
 */
import { describe, expect, it } from "vitest";
import { StoreConflictError, type Store, type StoreEntry, type StoreHistory, type StoreWatch } from "../../src/domain/ports.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
const text = (e: StoreEntry | null): string | null => (e && e.operation === "PUT" ? dec.decode(e.value) : null);

/** Reads `n` entries from a watch, failing after `timeoutMs` rather than hanging. */
async function take(it: AsyncIterator<StoreEntry>, n: number, timeoutMs = 5000): Promise<StoreEntry[]> {
  const out: StoreEntry[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`watch gave ${out.length} of ${n} entries in ${timeoutMs} ms`)), Math.max(1, deadline - Date.now()));
    });
    try {
      const r = await Promise.race([it.next(), timeout]);
      if (r.done) throw new Error(`watch ended after ${out.length} of ${n} entries`);
      out.push(r.value);
    } finally {
      clearTimeout(timer);
    }
  }
  return out;
}

/** A watch with the one iterator the test reads it through. */
async function openWatch(store: Store, afterRevision: number): Promise<{ watch: StoreWatch; it: AsyncIterator<StoreEntry> }> {
  const watch = await store.watch(afterRevision);
  return { watch, it: watch[Symbol.asyncIterator]() };
}

const summary = (entries: StoreEntry[]) => entries.map((e) => [e.key, e.operation, e.operation === "PUT" ? dec.decode(e.value) : ""]);

export function storeContract(name: string, makeStore: () => Store | Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    it("creates a key with expected revision 0, once", async () => {
      const store = await makeStore();
      expect(await store.get("agents.alpha")).toBeNull();
      const rev = await store.write("agents.alpha", enc.encode("v1"), 0);
      expect(rev).toBeGreaterThan(0);
      const entry = await store.get("agents.alpha");
      expect(entry).toMatchObject({ key: "agents.alpha", revision: rev, operation: "PUT" });
      expect(text(entry)).toBe("v1");
      expect(typeof entry?.created).toBe("number");
      await expect(store.write("agents.alpha", enc.encode("v2"), 0)).rejects.toBeInstanceOf(StoreConflictError);
      expect(text(await store.get("agents.alpha"))).toBe("v1");
    });

    it("updates with compare-and-set on the key's revision", async () => {
      const store = await makeStore();
      const r1 = await store.write("instances.alpha.i1", enc.encode("a"), 0);
      const r2 = await store.write("instances.alpha.i1", enc.encode("b"), r1);
      expect(r2).toBeGreaterThan(r1);
      expect(await store.get("instances.alpha.i1")).toMatchObject({ revision: r2 });
      expect(text(await store.get("instances.alpha.i1"))).toBe("b");
    });

    it("refuses a write on a stale or wrong revision with StoreConflictError", async () => {
      const store = await makeStore();
      const r1 = await store.write("k.one", enc.encode("a"), 0);
      await store.write("k.one", enc.encode("b"), r1);
      const stale = await store.write("k.one", enc.encode("c"), r1).catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(StoreConflictError);
      expect((stale as StoreConflictError).key).toBe("k.one");
      await expect(store.write("k.one", enc.encode("c"), r1 + 100)).rejects.toBeInstanceOf(StoreConflictError);
      await expect(store.write("k.absent", enc.encode("c"), r1)).rejects.toBeInstanceOf(StoreConflictError);
      expect(text(await store.get("k.one"))).toBe("b");
    });

    it("keeps one revision sequence across keys", async () => {
      const store = await makeStore();
      const a = await store.write("k.a", enc.encode("1"), 0);
      const b = await store.write("k.b", enc.encode("1"), 0);
      const c = await store.write("k.a", enc.encode("2"), a);
      expect(b).toBeGreaterThan(a);
      expect(c).toBeGreaterThan(b);
    });

    it("removes with compare-and-set and returns the DEL marker from get", async () => {
      const store = await makeStore();
      const r1 = await store.write("k.gone", enc.encode("a"), 0);
      const r2 = await store.write("k.gone", enc.encode("b"), r1);
      await expect(store.remove("k.gone", r1)).rejects.toBeInstanceOf(StoreConflictError);
      expect(text(await store.get("k.gone"))).toBe("b");
      await store.remove("k.gone", r2);
      const marker = await store.get("k.gone");
      expect(marker).not.toBeNull();
      expect(marker?.operation).toBe("DEL");
      expect(marker?.revision).toBeGreaterThan(r2);
      expect(marker?.value.length).toBe(0);
      expect(await store.lastRevision()).toBe(marker?.revision);
    });

    it("creates a key again over its delete marker with expected revision 0", async () => {
      const store = await makeStore();
      const r1 = await store.write("k.again", enc.encode("a"), 0);
      await store.remove("k.again", r1);
      const r3 = await store.write("k.again", enc.encode("b"), 0);
      expect(text(await store.get("k.again"))).toBe("b");
      expect((await store.get("k.again"))?.revision).toBe(r3);
      await expect(store.write("k.again", enc.encode("c"), 0)).rejects.toBeInstanceOf(StoreConflictError);
    });

    it("reports the newest revision, 0 when empty", async () => {
      const store = await makeStore();
      expect(await store.lastRevision()).toBe(0);
      await store.write("k.a", enc.encode("1"), 0);
      const r = await store.write("k.b", enc.encode("1"), 0);
      expect(await store.lastRevision()).toBe(r);
    });

    it("watches from 0: the last value of every key in store order, then changes in order", async () => {
      const store = await makeStore();
      const a1 = await store.write("k.a", enc.encode("a1"), 0);
      const b1 = await store.write("k.b", enc.encode("b1"), 0);
      await store.write("k.a", enc.encode("a2"), a1);
      const c1 = await store.write("k.c", enc.encode("c1"), 0);
      await store.remove("k.c", c1);
      const { watch, it } = await openWatch(store, 0);
      try {
        const initial = await take(it, 3);
        expect(summary(initial)).toEqual([
          ["k.b", "PUT", "b1"],
          ["k.a", "PUT", "a2"],
          ["k.c", "DEL", ""],
        ]);
        expect(initial.map((e) => e.revision)).toEqual([...initial.map((e) => e.revision)].sort((x, y) => x - y));
        const b2 = await store.write("k.b", enc.encode("b2"), b1);
        const d1 = await store.write("k.d", enc.encode("d1"), 0);
        await store.remove("k.d", d1);
        const later = await take(it, 3);
        expect(summary(later)).toEqual([
          ["k.b", "PUT", "b2"],
          ["k.d", "PUT", "d1"],
          ["k.d", "DEL", ""],
        ]);
        expect(later[0]?.revision).toBe(b2);
        expect(later[1]?.revision).toBe(d1);
      } finally {
        watch.stop();
      }
    });

    it("watches an empty store and sees the first write", async () => {
      const store = await makeStore();
      const { watch, it } = await openWatch(store, 0);
      try {
        const r = await store.write("k.first", enc.encode("x"), 0);
        const [entry] = await take(it, 1);
        expect(entry).toMatchObject({ key: "k.first", revision: r, operation: "PUT" });
      } finally {
        watch.stop();
      }
    });

    it("resumes a watch after a given revision", async () => {
      const store = await makeStore();
      const a1 = await store.write("k.a", enc.encode("a1"), 0);
      const b1 = await store.write("k.b", enc.encode("b1"), 0);
      const a2 = await store.write("k.a", enc.encode("a2"), a1);
      const c1 = await store.write("k.c", enc.encode("c1"), 0);
      const { watch, it } = await openWatch(store, b1);
      try {
        const resumed = await take(it, 2);
        expect(resumed.map((e) => [e.key, e.revision])).toEqual([
          ["k.a", a2],
          ["k.c", c1],
        ]);
        const b2 = await store.write("k.b", enc.encode("b2"), b1);
        expect((await take(it, 1))[0]).toMatchObject({ key: "k.b", revision: b2 });
      } finally {
        watch.stop();
      }
    });

    it("ends the iteration when the watch is stopped", async () => {
      const store = await makeStore();
      await store.write("k.a", enc.encode("a1"), 0);
      const { watch, it } = await openWatch(store, 0);
      await take(it, 1);
      const next = it.next();
      watch.stop();
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        next,
        new Promise<"hung">((resolve) => {
          timer = setTimeout(() => resolve("hung"), 3000);
        }),
      ]);
      clearTimeout(timer);
      expect(result).toEqual({ done: true, value: undefined });
    });
  });
}

/** The kept values of each key (StoreHistory), for stores made with a history of 3. */
export function storeHistoryContract(name: string, makeStore: () => (Store & StoreHistory) | Promise<Store & StoreHistory>): void {
  describe(`Store history contract: ${name}`, () => {
    it("keeps the last values of each key, oldest first, and a resumed watch gives every kept value after the revision", async () => {
      const store = await makeStore();
      expect(store.historyDepth).toBe(3);
      let rev = 0;
      for (const v of ["a", "b", "c", "d"]) rev = await store.write("instances.t.i1", enc.encode(v), rev);
      const other = await store.write("instances.t.i2", enc.encode("x"), 0);
      await store.remove("instances.t.i2", other);
      expect((await store.history("instances.t.i1")).map((e) => dec.decode(e.value))).toEqual(["b", "c", "d"]);
      expect((await store.history("instances.t.i2")).map((e) => e.operation)).toEqual(["PUT", "DEL"]);
      expect(await store.history("instances.t.none")).toEqual([]);
      const { watch, it: iter } = await openWatch(store, 2);
      expect(summary(await take(iter, 4))).toEqual([
        ["instances.t.i1", "PUT", "c"],
        ["instances.t.i1", "PUT", "d"],
        ["instances.t.i2", "PUT", "x"],
        ["instances.t.i2", "DEL", ""],
      ]);
      watch.stop();
    });

    it("purges with compare-and-set: the key keeps its marker alone, a watch sees it, and a create over it works", async () => {
      const store = await makeStore();
      let rev = 0;
      for (const v of ["a", "b", "c"]) rev = await store.write("instances.t.i1", enc.encode(v), rev);
      await expect(store.remove("instances.t.i1", rev - 1, { purge: true })).rejects.toBeInstanceOf(StoreConflictError);
      const { watch, it: iter } = await openWatch(store, rev);
      await store.remove("instances.t.i1", rev, { purge: true });
      expect((await store.history("instances.t.i1")).map((e) => e.operation)).toEqual(["PURGE"]);
      expect((await store.get("instances.t.i1"))?.operation).toBe("PURGE");
      expect(summary(await take(iter, 1))).toEqual([["instances.t.i1", "PURGE", ""]]);
      watch.stop();
      await store.write("instances.t.i1", enc.encode("again"), 0);
      expect(text(await store.get("instances.t.i1"))).toBe("again");
    });

    it("watches every kept value of every key from the oldest, then changes as they come", async () => {
      const store = await makeStore();
      let rev = 0;
      for (const v of ["a", "b", "c", "d"]) rev = await store.write("instances.t.i1", enc.encode(v), rev);
      await store.write("instances.t.i2", enc.encode("x"), 0);
      const watch = await store.watchKept();
      const iter = watch[Symbol.asyncIterator]();
      expect(summary(await take(iter, 4))).toEqual([
        ["instances.t.i1", "PUT", "b"],
        ["instances.t.i1", "PUT", "c"],
        ["instances.t.i1", "PUT", "d"],
        ["instances.t.i2", "PUT", "x"],
      ]);
      await store.write("instances.t.i3", enc.encode("y"), 0);
      expect(summary(await take(iter, 1))).toEqual([["instances.t.i3", "PUT", "y"]]);
      watch.stop();
    });
  });
}
