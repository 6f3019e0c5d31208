import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { storeContract, storeHistoryContract } from "../../store-contract.js";

storeContract("MemoryStore", () => new MemoryStore());
storeHistoryContract("MemoryStore", () => new MemoryStore(3));

describe("MemoryStore", () => {
  it("stamps entries with its replaceable clock", async () => {
    const store = new MemoryStore();
    store.now = () => 12_345;
    await store.write("k.a", new Uint8Array([1]), 0);
    expect((await store.get("k.a"))?.created).toBe(12_345);
  });

  it("feeds several watches independently", async () => {
    const store = new MemoryStore();
    const w1 = await store.watch(0);
    const w2 = await store.watch(0);
    await store.write("k.a", new Uint8Array([1]), 0);
    const i1 = w1[Symbol.asyncIterator]();
    const i2 = w2[Symbol.asyncIterator]();
    const [a, b] = await Promise.all([i1.next(), i2.next()]);
    expect(a.value).toMatchObject({ key: "k.a", revision: 1 });
    expect(b.value).toMatchObject({ key: "k.a", revision: 1 });
    w1.stop();
    expect(await i1.next()).toEqual({ done: true, value: undefined });
    await store.write("k.b", new Uint8Array([2]), 0);
    expect((await i2.next()).value).toMatchObject({ key: "k.b", revision: 2 });
    w2.stop();
  });
});
