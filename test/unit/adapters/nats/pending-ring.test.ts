import { describe, expect, it } from "vitest";
import { PendingRing } from "../../../../src/adapters/nats/pending-ring.js";

type P = { token: number; deadline: number; name: string };

describe("PendingRing", () => {
  it("gives back each request once, by its token, and nothing for unknown or stale tokens", () => {
    const ring = new PendingRing<P>(4);
    const a = { token: ring.nextToken(), deadline: 10, name: "a" };
    const b = { token: ring.nextToken(), deadline: 10, name: "b" };
    ring.put(a);
    ring.put(b);
    expect(ring.size).toBe(2);
    expect(ring.take(b.token)).toBe(b);
    expect(ring.take(b.token)).toBeUndefined();
    expect(ring.take(Number("x"))).toBeUndefined();
    expect(ring.take(-1)).toBeUndefined();
    expect(ring.take(a.token + 4)).toBeUndefined(); // same slot, other token
    expect(ring.take(a.token)).toBe(a);
    expect(ring.size).toBe(0);
  });

  it("grows when an old request is still waiting where a new one would go", () => {
    const ring = new PendingRing<P>(4);
    const stuck = { token: ring.nextToken(), deadline: 10, name: "stuck" };
    ring.put(stuck);
    const later: P[] = [];
    for (let i = 0; i < 100; i++) {
      const p = { token: ring.nextToken(), deadline: 10, name: `p${i}` };
      ring.put(p);
      later.push(p);
      expect(ring.take(p.token)).toBe(p);
    }
    expect(ring.take(stuck.token)).toBe(stuck);
    const many = Array.from({ length: 3000 }, (_, i) => ({ token: ring.nextToken(), deadline: i, name: `m${i}` }));
    for (const p of many) ring.put(p);
    expect(ring.size).toBe(3000);
    for (const p of many) expect(ring.take(p.token)).toBe(p);
  });

  it("takes out exactly the expired requests", () => {
    const ring = new PendingRing<P>();
    for (let i = 0; i < 10; i++) ring.put({ token: ring.nextToken(), deadline: i, name: `p${i}` });
    expect(ring.takeExpired(4.5).map((p) => p.name).sort()).toEqual(["p0", "p1", "p2", "p3", "p4"]);
    expect(ring.size).toBe(5);
    expect(ring.takeExpired(Infinity)).toHaveLength(5);
    expect(ring.size).toBe(0);
  });
});
