/**
 * Hostile and broken input on every endpoint, through a real nats-server and the registry
 * as its own process (issue 6). Property-based: random bytes, random JSON, and valid bodies
 * with one field made hostile (test/harness/hostile.ts), on subjects with good and bad tokens.
 * For every request: an error reply has exactly the shape of PROTOCOL.md section 1 and is
 * never `internal`, and a request that is refused (or is a query) leaves the bucket's last
 * revision where it was. After the run: the process is up and answers, and the seed agents
 * read exactly as before. RELIABILITY_FULL=1 sends 10,000 requests and bounds memory growth.
 */
import fc from "fast-check";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Msg } from "@nats-io/nats-core";
import { expect, it } from "vitest";
import { ERROR_CATALOGUE, type ErrorCode } from "../../src/domain/errors.js";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry } from "../harness/registry-process.js";
import { SIZE_LIMIT, WRITE_ENDPOINTS, hostileRequest, type HostileRequest } from "../harness/hostile.js";

const FULL = process.env.RELIABILITY_FULL === "1";
const RUNS = FULL ? 10_000 : 400;
const WARM_UP = FULL ? 1_000 : 100;
/** RSS after the run over RSS after the warm-up: the bound RELIABILITY_FULL asserts (docs/reliability.md). */
const RSS_RATIO_BOUND = 1.5;
const PREFIX = "hi.registry";
const BUCKET = "hi-registry";
const ALL_STATUSES = ["registered", "ready", "draining", "deregistered"];
const dec = new TextDecoder();

/** The error envelope of PROTOCOL.md section 1, checked field by field. */
function expectErrorShape(msg: Msg, what: string): ErrorCode {
  const status = msg.headers?.get("Nats-Service-Error-Code") ?? "";
  const description = msg.headers?.get("Nats-Service-Error") ?? "";
  expect(status, what).toMatch(/^\d{3}$/);
  expect(description.length, what).toBeGreaterThan(0);
  expect(description, what).not.toMatch(/[\r\n]/);
  const body = JSON.parse(dec.decode(msg.data)) as { error: { code: ErrorCode; message: string; issues?: unknown[] } };
  expect(Object.keys(body), what).toEqual(["error"]);
  expect(Object.keys(ERROR_CATALOGUE), what).toContain(body.error.code);
  expect(ERROR_CATALOGUE[body.error.code].status, what).toBe(Number(status));
  expect(typeof body.error.message, what).toBe("string");
  for (const issue of body.error.issues ?? []) expect(issue, what).toEqual({ path: expect.any(String), message: expect.any(String) });
  // Hostile input is the client's fault: an `internal` answer means an unexpected exception.
  expect(body.error.code, what).not.toBe("internal");
  return body.error.code;
}

it("every endpoint answers hostile input with the structured error and changes nothing", { timeout: FULL ? 900_000 : 120_000 }, async () => {
  await using server = await withNatsServer();
  const proc = await spawnRegistry("hostile", {
    NATS_URL: server.url,
    REGISTRY_PREFIX: PREFIX,
    REGISTRY_BUCKET: BUCKET,
    REGISTRY_EVENTS_STREAM: "HI_EVENTS",
    // Nothing writes on its own during the run: no lease renewal, no eviction of what hostile
    // requests managed to register (every interval is clamped to an hour).
    REGISTRY_LEASE_MS: "3600000",
    REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "3600000",
    LOG_LEVEL: "warn",
  });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const c = await RawClient.connect(server.url, PREFIX);
  try {
    const jsm = await jetstreamManager(c.nc);
    const lastRevision = async () => (await jsm.streams.info(`KV_${BUCKET}`)).state.last_seq;
    const seedA = await c.request("register.seed-a", { spec: spec("seed-a"), instance_id: "a1" });
    expect(seedA.ok).toBe(true);
    const seedB = await c.request("tenant.acme.register.seed-b", { spec: spec("seed-b", { tenant_scope: "acme" }), instance_id: "b1" });
    expect(seedB.ok).toBe(true);
    // Read your writes: the snapshot below is taken once the replica's view holds both seeds.
    expect((await c.request("get", { agent_type: "seed-a", min_revision: Math.max(seedA.body.revision, seedB.body.revision) })).ok).toBe(true);
    const snapshot = async () => {
      const seeds = (r: { body: { agents: Array<{ agent_type: string }> } }) => r.body.agents.filter((a) => a.agent_type.startsWith("seed"));
      return {
        a: (await c.request("get", { agent_type: "seed-a" })).body.agent,
        b: (await c.request("tenant.acme.get", { agent_type: "seed-b" })).body.agent,
        lookup: (await c.request("lookup", { capability: "seed-a.run" })).body.providers,
        tenantLookup: (await c.request("tenant.acme.lookup", { capability: "seed-b.run" })).body.providers,
        list: seeds(await c.request("tenant.acme.list", { status: ALL_STATUSES, limit: 1000 })),
      };
    };
    const before = await snapshot();
    expect(before.a.instances).toHaveLength(1);
    expect(before.tenantLookup).toHaveLength(1);

    const tally = new Map<string, number>();
    let accepted = 0;
    const send = async (req: HostileRequest): Promise<void> => {
      const what = `${req.label} on ${JSON.stringify(req.subject)} (${req.payload.length} bytes)`;
      const revision = await lastRevision();
      const msg = await c.nc.request(req.subject, req.payload, { timeout: 10_000 });
      if (msg.headers?.get("Nats-Service-Error-Code")) {
        const code = expectErrorShape(msg, what);
        tally.set(code, (tally.get(code) ?? 0) + 1);
        expect(await lastRevision(), `refused, yet the bucket changed: ${what}`).toBe(revision);
      } else {
        const body = JSON.parse(dec.decode(msg.data)) as Record<string, unknown>;
        expect(typeof body === "object" && body !== null && !Array.isArray(body), what).toBe(true);
        if (!WRITE_ENDPOINTS.has(req.endpoint)) expect(await lastRevision(), `a query wrote: ${what}`).toBe(revision);
        else accepted++;
        tally.set("ok", (tally.get("ok") ?? 0) + 1);
      }
      expect(exited, `registry process exited after ${what}`).toBe(false);
    };
    const run = (numRuns: number, seed: number) =>
      fc.assert(fc.asyncProperty(hostileRequest(PREFIX), send), { numRuns, seed, endOnFailure: true, interruptAfterTimeLimit: FULL ? 800_000 : 100_000 });

    const started = Date.now();
    await run(WARM_UP, 6_001);
    const memory = async () => {
      const text = await proc.metrics();
      return { rss: metricValue(text, "process_resident_memory_bytes"), heap: metricValue(text, "nodejs_heap_size_used_bytes") };
    };
    const warm = await memory();
    await run(RUNS - WARM_UP, 6_002);
    const elapsed = Date.now() - started;
    const after = await memory();

    // A few requests the generators avoid on purpose, each checked on its own.
    const stale = await c.nc.request(`${PREFIX}.lookup`, JSON.stringify({ capability: "seed-a.run", min_revision: 1e12 }), { timeout: 5_000 });
    expect(expectErrorShape(stale, "min_revision far ahead")).toBe("stale_view");
    const oversize = await c.nc.request(`${PREFIX}.register.hostile`, new Uint8Array(SIZE_LIMIT + 1).fill(0x20), { timeout: 5_000 });
    expect(expectErrorShape(oversize, "one byte over the limit")).toBe("payload_too_large");
    const deep = await c.nc.request(`${PREFIX}.list`, `{"a":${"[".repeat(300_000)}${"]".repeat(300_000)}}`.slice(0, SIZE_LIMIT), { timeout: 5_000 });
    expect(["invalid_request", "payload_too_large"]).toContain(expectErrorShape(deep, "300,000-deep body"));

    // Still up, still ready, still answering, and the seeds read exactly as before.
    expect(exited).toBe(false);
    expect(await proc.ready()).toBe(true);
    expect(await snapshot()).toEqual(before);

    // Large valid specs (a 240 KB a2a_card each) must not make `list` unanswerable: five of them
    // are over NATS max_payload together, so pages end early and next_cursor goes on.
    let bigRevision = 0;
    for (let i = 0; i < 5; i++) {
      const big = await c.request(`register.big${i}`, { spec: spec(`big${i}`, { a2a_card: { blob: "x".repeat(240_000) } }), instance_id: "b" });
      expect(big.ok, JSON.stringify(big.body).slice(0, 200)).toBe(true);
      bigRevision = big.body.revision;
    }
    const listed: string[] = [];
    for (let cursor: string | null = null, pages = 0; pages === 0 || cursor !== null; pages++) {
      // Read your writes: the reply to a registration may come before this replica's view applied it.
      const page = await c.request("list", { limit: 1000, cursor, min_revision: bigRevision });
      expect(page.ok, JSON.stringify(page.body).slice(0, 200)).toBe(true);
      listed.push(...page.body.agents.map((a: { agent_type: string }) => a.agent_type));
      cursor = page.body.next_cursor;
      expect(pages).toBeLessThan(20);
    }
    // Named when missing, with the pages' order, so a paging fault shows what it dropped.
    expect(["big0", "big1", "big2", "big3", "big4", "seed-a"].filter((t) => !listed.includes(t)), `listed: ${listed.join(", ")}`).toEqual([]);

    const counts = [...tally.entries()].sort((x, y) => y[1] - x[1]).map(([k, n]) => `${k} ${n}`).join(", ");
    console.log(`hostile input: ${RUNS} requests in ${elapsed} ms (${counts}); ${accepted} hostile writes were valid and stored`);
    const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
    console.log(`memory after ${WARM_UP} warm-up requests: rss ${mb(warm.rss)}, heap ${mb(warm.heap)}; after ${RUNS}: rss ${mb(after.rss)}, heap ${mb(after.heap)} (rss ratio ${(after.rss / warm.rss).toFixed(2)})`);
    if (FULL) expect(after.rss / warm.rss).toBeLessThan(RSS_RATIO_BOUND);
  } finally {
    await c.close();
    await proc.stop();
  }
});
