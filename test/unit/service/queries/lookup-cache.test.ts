import { describe, expect, it } from "vitest";

const b = (text: string): Uint8Array => new TextEncoder().encode(text);
import { LookupCache } from "../../../../src/service/queries/lookup-cache.js";
import { cap, makeAgent, makeSpec } from "../../fixtures.js";

const agent = (type: string, caps: string[]) => makeAgent(makeSpec({ agent_type: type, capabilities: caps.map((c) => cap(c)) }));

describe("LookupCache", () => {
  it("keeps a reply until an agent type with its capability changes", () => {
    const cache = new LookupCache();
    cache.update("a", agent("a", ["x.one", "x.two"]));
    cache.update("b", agent("b", ["y.one"]));
    cache.set("k1", "x.one", b("one"));
    cache.set("k2", "y.one", b("two"));
    cache.update("b", agent("b", ["y.one"]));
    expect(cache.get("k1")).toEqual(b("one"));
    expect(cache.get("k2")).toBeUndefined();
  });

  it("drops replies about capabilities an agent type no longer declares, or that it now declares", () => {
    const cache = new LookupCache();
    cache.update("a", agent("a", ["x.old"]));
    cache.set("old", "x.old", b("1"));
    cache.set("new", "x.new", b("2"));
    cache.update("a", agent("a", ["x.new"]));
    expect(cache.get("old")).toBeUndefined();
    expect(cache.get("new")).toBeUndefined();
    cache.set("new", "x.new", b("3"));
    cache.update("a", undefined);
    expect(cache.get("new")).toBeUndefined();
  });

  it("drops the replies of an agent type whose instances changed under the same spec", () => {
    const cache = new LookupCache();
    const a = agent("a", ["x.one"]);
    cache.update("a", a);
    cache.set("k1", "x.one", b("one"));
    cache.set("k2", "y.other", b("two"));
    // The view passes the same spec object when only an instance joined, left or changed status.
    cache.update("a", { ...a, status: a.status });
    expect(cache.get("k1")).toBeUndefined();
    expect(cache.get("k2")).toEqual(b("two"));
    // A new spec that drops the capability: replies about it go, and stay gone once it is removed.
    cache.set("k1", "x.one", b("three"));
    cache.update("a", agent("a", ["x.two"]));
    expect(cache.get("k1")).toBeUndefined();
    cache.set("k3", "x.one", b("four"));
    cache.update("a", agent("a", ["x.two"]));
    expect(cache.get("k3")).toEqual(b("four"));
  });

  it("stays within its budget, dropping the oldest replies first", () => {
    const cache = new LookupCache(10);
    cache.set("a", "c.a", b("12345"));
    cache.set("b", "c.b", b("12345"));
    cache.set("c", "c.c", b("12345"));
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toEqual(b("12345"));
    expect(cache.get("c")).toEqual(b("12345"));
    expect(cache.bytes).toBe(10);
  });
});
