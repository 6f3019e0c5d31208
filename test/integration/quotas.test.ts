/**
 * Quotas against the attacks of issue 14 (docs/reliability.md, "Hardening"): a restricted agent
 * user that grew the bucket by 117 MB in 3.4 s with 600 registrations, and 2,400 instances
 * with 200 KB of metadata that took the registry to 808 MB. Now each is refused with 429
 * `limit_exceeded` before anything is stored; a full bucket answers the same, never `internal`.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

const bucketBytes = async (r: TestRegistry) => (await (await jetstreamManager(c.nc)).streams.info(`KV_${configOf(r).bucket}`)).state.bytes;

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url, { maxPayloadBytes: 256 * 1024, maxInstancesPerType: 500 });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  expect((await c.request("register.bystander", { spec: spec("bystander") })).ok).toBe(true);
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

it("refuses 600 registrations carrying 200 KB of metadata each, storing nothing; a bystander is served meanwhile (figures printed)", async () => {
  const before = await bucketBytes(reg);
  const rssBefore = process.memoryUsage().rss;
  // 50 values of 4,000 characters: each within the message's own per-value bound.
  const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, "m".repeat(4000)]));
  const lookups: number[] = [];
  let attacking = true;
  const bystander = (async () => {
    const other = await RawClient.connect(server.url, configOf(reg).prefix);
    while (attacking) {
      const t0 = performance.now();
      expect((await other.request("lookup", { capability: "bystander.run" })).ok).toBe(true);
      lookups.push(performance.now() - t0);
    }
    await other.close();
  })();
  const codes = new Map<string, number>();
  for (let i = 0; i < 600; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, (_, k) => c.request("register.hog", { spec: spec("hog"), instance_id: `h${i + k}`, metadata }, 20_000)),
    );
    for (const r of batch) codes.set(r.ok ? "ok" : r.body.error.code, (codes.get(r.ok ? "ok" : r.body.error.code) ?? 0) + 1);
  }
  attacking = false;
  await bystander;
  expect(Object.fromEntries(codes)).toEqual({ limit_exceeded: 600 });
  // Nothing of the hog was stored; the bucket moves only by the evictor lease's renewals.
  expect((await c.request("get", { agent_type: "hog" })).status).toBe(404);
  const grown = (await bucketBytes(reg)) - before;
  expect(grown).toBeLessThan(1024);
  lookups.sort((a, b) => a - b);
  const p99 = lookups[Math.floor(lookups.length * 0.99)] ?? 0;
  console.log(`quotas: 600 registrations with 200 KB metadata: all 429 limit_exceeded, bucket +${grown} bytes, bystander lookups ${lookups.length} p99 ${p99.toFixed(1)} ms, test process RSS +${((process.memoryUsage().rss - rssBefore) / 2 ** 20).toFixed(0)} MB`);
});

it("refuses a new instance past REGISTRY_MAX_INSTANCES_PER_TYPE, naming the limit", async () => {
  for (let i = 0; i < 500; i += 50) {
    const batch = await Promise.all(Array.from({ length: 50 }, (_, k) => c.request("register.many", { spec: spec("many"), instance_id: `m${i + k}` })));
    expect(batch.every((r) => r.ok)).toBe(true);
  }
  const last = await c.request("get", { agent_type: "many", instances_limit: 1 });
  await c.request("get", { agent_type: "many", min_revision: last.body.revision, instances_limit: 1 });
  const over = await c.request("register.many", { spec: spec("many"), instance_id: "one-more" });
  expect(over.status).toBe(429);
  expect(over.body.error).toMatchObject({ code: "limit_exceeded" });
  expect(over.body.error.message).toMatch(/REGISTRY_MAX_INSTANCES_PER_TYPE/);
  expect(over.msg.headers?.get("Nats-Service-Error-Code")).toBe("429");
});

it("a full bucket answers 429 limit_exceeded, not internal or unavailable", async () => {
  // The byte budgets off: this is about the bucket itself refusing (test/fault/bucket-full.test.ts has both).
  await using small = await startRegistry(server.url, { bucketMaxBytes: 64 * 1024, typeMaxBytes: 0, tenantMaxBytes: 0 });
  const s = await RawClient.connect(server.url, configOf(small).prefix);
  try {
    const outcomes: string[] = [];
    for (let i = 0; i < 40 && !outcomes.includes("limit_exceeded"); i++) {
      const r = await s.request(`register.filler-${i}`, { spec: spec(`filler-${i}`, { description: "d".repeat(4000) }) });
      outcomes.push(r.ok ? "ok" : r.body.error.code);
    }
    expect(outcomes.at(-1)).toBe("limit_exceeded");
    expect(outcomes.filter((o) => o !== "ok" && o !== "limit_exceeded")).toEqual([]);
  } finally {
    await s.close();
  }
});
