/**
 * Queries parked on a revision that will not come (issue 14, finding 5). 40,000 lookups with a
 * far-ahead `min_revision` once took 33 s to drain (every timeout filtered the whole waiter
 * list) and held other lookups past 10 s; invalid bodies carrying `min_revision` waited 2 s and
 * got 503 instead of 400. Against a registry process and a real nats-server, asserted: every
 * parked query is answered `stale_view` (none times out at the client), the bound answered
 * some at once, every lookup of another client meanwhile names its provider, an invalid body
 * is 400 whatever its `min_revision`, and a `min_revision` that is reached is still served.
 */
import type { Msg } from "@nats-io/nats-core";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry } from "../harness/registry-process.js";

const PARKED = 40_000;
const PREFIX = "mr.registry";
const FAR = 1e12;
const dec = new TextDecoder();
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

/** A bad body for every query op, each with a far-ahead min_revision. */
const INVALID: Array<[string, Record<string, unknown>]> = [
  ["lookup", { capability: "Not A Capability" }],
  ["lookup", { capability: "seed.run", version: "not a range" }],
  ["get", { agent_type: 7 }],
  ["list", { limit: 0 }],
  ["capabilities", { status: ["sleeping"] }],
  ["route", { tags: "x" }],
  ["find", { skill: "a.b", tag: "both" }],
  ["search", { query: "" }],
  ["discover", { capability: ["x"] }],
  ["lookup", { capability: "seed.run", min_revision: "soon" }],
  ["lookup", { capability: "seed.run", min_revision: 1.5e12 + 0.5 }],
];

const errorOf = (m: Msg): { code: string; message: string } | null => (m.headers?.get("Nats-Service-Error-Code") ? (JSON.parse(dec.decode(m.data)) as { error: { code: string; message: string } }).error : null);

it("parked min_revision queries are bounded, answered, and stall no one; invalid bodies are 400 at once", { timeout: 180_000 }, async () => {
  await using server = await withNatsServer();
  const proc = await spawnRegistry("parking", { NATS_URL: server.url, REGISTRY_PREFIX: PREFIX, REGISTRY_BUCKET: "mr", REGISTRY_EVENTS_STREAM: "MR_EVENTS", LOG_LEVEL: "warn" });
  const c = await RawClient.connect(server.url, PREFIX);
  const flood = await RawClient.connect(server.url, PREFIX);
  try {
    const registered = await c.request("register.seed", { spec: spec("seed"), instance_id: "s1" });
    expect(registered.ok).toBe(true);
    // Read your writes: the bystander's lookups below send no min_revision and count a missing seed as a failure.
    expect((await c.request("get", { agent_type: "seed", min_revision: registered.body.revision })).ok).toBe(true);

    for (const [op, body] of INVALID) {
      const m = await c.nc.request(`${PREFIX}.${op}`, JSON.stringify({ min_revision: FAR, ...body }), { timeout: 1_000 });
      expect(errorOf(m)?.code, `${op} ${JSON.stringify(body)}`).toBe("invalid_request");
    }

    // Another client looks up throughout the flood.
    let flooding = true;
    const bystander = (async () => {
      const out = { ms: [] as number[], failures: [] as string[] };
      while (flooding) {
        const started = performance.now();
        const r = await c.request("lookup", { capability: "seed.run" }, 10_000).catch((e: unknown) => String(e));
        out.ms.push(performance.now() - started);
        if (!(typeof r === "object" && r.ok && r.body.providers.length === 1)) out.failures.push(JSON.stringify(typeof r === "object" ? r.body : r).slice(0, 200));
      }
      return out;
    })();

    const rssBefore = metricValue(await proc.metrics(), "process_resident_memory_bytes") / 2 ** 20;
    const body = JSON.stringify({ capability: "seed.run", min_revision: FAR });
    const replies = await Promise.all(
      // 30 s, not a speed bound: the quadratic drain this guards against took 33 s on a quiet machine,
      // and a busy one (other test files, other work) answered 30,000 of 40,000 within 10 s.
      Array.from({ length: PARKED }, () => flood.nc.request(`${PREFIX}.lookup`, body, { timeout: 30_000 }).then(errorOf, (e: unknown) => ({ code: "no answer", message: String(e) }))),
    );
    flooding = false;
    const { ms, failures } = await bystander;
    const rssAfter = metricValue(await proc.metrics(), "process_resident_memory_bytes") / 2 ** 20;

    const codes = new Map<string, number>();
    for (const r of replies) codes.set(r?.code ?? "ok", (codes.get(r?.code ?? "ok") ?? 0) + 1);
    const atOnce = replies.filter((r) => r?.message.includes("too many queries are waiting")).length;
    console.log(
      `${PARKED} parked lookups: ${[...codes].map(([k, v]) => `${k} ${v}`).join(", ")} (${atOnce} refused at once); ` +
        `bystander: ${ms.length} lookups, p50 ${pct(ms, 50).toFixed(2)} ms, p99 ${pct(ms, 99).toFixed(2)} ms, max ${Math.max(...ms).toFixed(0)} ms; RSS ${rssBefore.toFixed(1)} -> ${rssAfter.toFixed(1)} MB`,
    );
    expect(codes.get("no answer") ?? 0).toBe(0);
    expect(codes.get("stale_view")).toBe(PARKED);
    expect(atOnce).toBeGreaterThan(0);
    expect(failures).toEqual([]);

    // Reading one's own write still waits for it and is served.
    const write = await c.request("register.late", { spec: spec("late"), instance_id: "l1" });
    const own = await c.request("lookup", { capability: "late.run", min_revision: write.body.revision });
    expect(own.ok).toBe(true);
    expect(own.body.providers).toHaveLength(1);
    expect(await proc.ready()).toBe(true);
  } finally {
    await c.close();
    await flood.close();
    await proc.stop();
  }
});
