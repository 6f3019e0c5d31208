/**
 * One agent type driving the shared bucket to its limit (issue 35, item 3). A full bucket
 * refuses every write, for every tenant: under store liveness, heartbeats too. Two cases, each
 * on a real nats-server with a small bucket:
 * - default byte budgets: the type is refused at its tenth of the bucket, so everyone else
 *   keeps heartbeating and registering, and only a truly silent instance is evicted;
 * - budgets off, the bucket full for real: heartbeats the bucket refuses are answered 503
 *   `unavailable` (retry), and nobody is evicted for heartbeats the registry could not store.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, registerSubject, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { encodeRecord, instanceKey, liveInstanceRecord } from "../../src/domain/model/records.js";

const INTERVAL = 200;
const WINDOW = 3 * INTERVAL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Bystander = { type: string; id: string; tenant?: string };

/** Heartbeats every bystander every half interval until stopped; keeps every refusal. */
function heartbeating(c: RawClient, who: () => readonly Bystander[], interval = INTERVAL) {
  const refusals: Array<{ who: string; status: number; code: string; message: string }> = [];
  let answered = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      await Promise.all(
        who().map(async (b) => {
          const subject = b.tenant ? `tenant.${b.tenant}.heartbeat.${b.type}.${b.id}` : `heartbeat.${b.type}.${b.id}`;
          const r = await c.request(subject, {});
          if (r.ok) answered++;
          else refusals.push({ who: `${b.type}/${b.id}`, status: r.status, code: r.body.error.code, message: r.body.error.message });
        }),
      );
      await sleep(interval / 2);
    }
  })();
  return { refusals, answered: () => answered, stop: async () => ((on = false), await loop) };
}

async function register(c: RawClient, b: Bystander, extra: Record<string, unknown> = {}, interval = INTERVAL) {
  const s = spec(b.type, b.tenant ? { tenant_scope: b.tenant } : {});
  return c.request(registerSubject(b.type, s), { spec: s, instance_id: b.id, heartbeat_interval_ms: interval, ...extra });
}

const bucketState = async (c: RawClient, r: TestRegistry) => (await (await jetstreamManager(c.nc)).streams.info(`KV_${configOf(r).bucket}`)).state.bytes;

const evictedTypes = async (c: RawClient, r: TestRegistry) =>
  (await readStoredEvents(c.nc, configOf(r).eventsStream)).filter((e) => e.event.type === "registry.agent.deregistered").map((e) => `${e.event.data.agent_type}/${e.event.data.instance_id}`);

it("default byte budgets: a type registering 4 KB instances without end is refused at its tenth of the bucket; nobody else's heartbeat or registration is refused, only the silent instance is evicted", async () => {
  await using server = await withNatsServer();
  const BUCKET = 512 * 1024;
  await using reg = await startRegistry(server.url, { bucketMaxBytes: BUCKET, liveness: "store" });
  const c = await RawClient.connect(server.url, configOf(reg).prefix);
  const bystanders: Bystander[] = [
    ...["a1", "a2", "a3"].map((id) => ({ type: "steady-a", id })),
    ...["b1", "b2", "b3"].map((id) => ({ type: "steady-b", id, tenant: "calm" })),
  ];
  let beats: ReturnType<typeof heartbeating> | undefined;
  try {
    for (const b of bystanders) expect((await register(c, b)).ok).toBe(true);
    expect((await register(c, { type: "quiet", id: "q" })).ok).toBe(true);
    beats = heartbeating(c, () => bystanders);

    // The hog: one type, new instance ids with 4 KB of metadata each, for four windows and past its first refusal.
    const metadata = { blob: "h".repeat(4000) };
    const refusals = new Map<string, number>();
    let admitted = 0;
    const started = Date.now();
    for (let i = 0; Date.now() - started < 4 * WINDOW || refusals.size === 0; i++) {
      const r = await c.request("register.hog", { spec: spec("hog"), instance_id: `h${i}`, metadata, heartbeat_interval_ms: 60_000 });
      if (r.ok) admitted++;
      else refusals.set(`${r.status} ${r.body.error.code}: ${r.body.error.message.replace(/\d+/g, "N")}`, (refusals.get(r.body.error.message) ?? 0) + 1);
      if (refusals.size > 0 && i % 20 === 0 && bystanders.length < 9) {
        // Others still register while the hog is at its budget, and heartbeat from then on.
        const late: Bystander = { type: `late-${i}`, id: "l" };
        const lr = await register(c, late, { metadata: { note: "x".repeat(1000) } });
        expect(lr.ok, `a late registration: ${JSON.stringify(lr.body)}`).toBe(true);
        bystanders.push(late);
      }
    }
    expect([...refusals.keys()]).toEqual(["429 limit_exceeded: agent type hog holds about N bytes of the bucket and this registration would add N (limit N, REGISTRY_TYPE_MAX_BYTES)"]);
    expect(await bucketState(c, reg)).toBeLessThan(BUCKET / 2);

    // The evictor works meanwhile: the instance that never heartbeated goes, nobody else.
    await waitFor(async () => (await evictedTypes(c, reg)).includes("quiet/q"), { timeoutMs: 10_000, message: "the silent instance evicted" });
    await sleep(2 * WINDOW);
    await beats.stop();
    expect(beats.refusals).toEqual([]);
    expect(await evictedTypes(c, reg)).toEqual(["quiet/q"]);
    console.log(`bucket-full, default budgets: hog admitted ${admitted} instances then refused, ${beats.answered()} bystander heartbeats all answered, bucket at ${(((await bucketState(c, reg)) / BUCKET) * 100).toFixed(0)}%`);
  } finally {
    await beats?.stop();
    await c.close();
  }
});

it("budgets off, the bucket full for real: heartbeats it refuses are 503 unavailable, and nobody is evicted for them, though a tombstone would fit where a heartbeat does not", async () => {
  await using server = await withNatsServer();
  const BUCKET = 256 * 1024;
  const SLOW = 1000;
  await using reg = await startRegistry(server.url, { bucketMaxBytes: BUCKET, typeMaxBytes: 0, tenantMaxBytes: 0, liveness: "store" });
  const c = await RawClient.connect(server.url, configOf(reg).prefix);
  const bystanders: Bystander[] = ["y1", "y2", "y3", "y4"].map((id) => ({ type: "young", id }));
  let beats: ReturnType<typeof heartbeating> | undefined;
  try {
    // The hog takes the bucket with 4 KB instances, to within a few of them.
    for (let i = 0; BUCKET - (await bucketState(c, reg)) > 16 * 1024; i++) {
      expect((await c.request("register.hog", { spec: spec("hog"), instance_id: `h${i}`, metadata: { blob: "h".repeat(4000) }, heartbeat_interval_ms: 60_000 })).ok).toBe(true);
    }
    // Registered now and first heard once the bucket is full: each key holds one value, so a
    // heartbeat must add one (1.4 KB), which the full bucket refuses; a key at its history
    // may replace its oldest value, which is why the young are the ones at risk.
    for (const b of bystanders) expect((await register(c, b, { metadata: { note: "y".repeat(1000) } }, SLOW)).ok).toBe(true);
    // The hog's last bytes, put straight into the bucket as one more of its instances, leave
    // a gap of GAP bytes: room for two eviction tombstones (about 250 bytes each, once the
    // lease's renewals have taken their few hundred), not for one heartbeat. Evicting them
    // would succeed where their heartbeats cannot: before the full store counted as a failing
    // one, two of the four were evicted so.
    const GAP = 1000;
    const kv = await new Kvm(c.nc).open(configOf(reg).bucket);
    const key = instanceKey("hog", "filler");
    const framing = `$KV.${configOf(reg).bucket}.${key}`.length + 30;
    const bare = encodeRecord(liveInstanceRecord({ version: "1.0.0", status: "ready", registered_at: 1, last_heartbeat: 1, heartbeat_interval_ms: 60_000, active_tasks: 0, metadata: { blob: "" }, spec_changed: false })).length;
    const pad = BUCKET - (await bucketState(c, reg)) - GAP - framing - bare;
    await kv.put(key, encodeRecord(liveInstanceRecord({ version: "1.0.0", status: "ready", registered_at: 1, last_heartbeat: 1, heartbeat_interval_ms: 60_000, active_tasks: 0, metadata: { blob: "f".repeat(pad) }, spec_changed: false })));
    const gap = BUCKET - (await bucketState(c, reg));
    expect(gap).toBeGreaterThanOrEqual(GAP - 50);
    expect(gap).toBeLessThanOrEqual(GAP + 50);

    beats = heartbeating(c, () => bystanders, SLOW);
    // Three eviction windows of theirs, every heartbeat refused.
    await sleep(3 * 3 * SLOW);
    await beats.stop();
    expect(await evictedTypes(c, reg)).toEqual([]);
    expect(reg.view.get("young")?.instances.size).toBe(bystanders.length);
    expect(beats.refusals.length).toBeGreaterThan(0);
    expect(new Set(beats.refusals.map((r) => `${r.status} ${r.code}`))).toEqual(new Set(["503 unavailable"]));
    expect(beats.refusals[0]?.message).toMatch(/store is full .*REGISTRY_BUCKET_MAX_BYTES.*retry/);
    console.log(`bucket-full, budgets off: a ${gap}-byte gap left; ${beats.refusals.length} heartbeats refused (503), ${beats.answered()} answered, 0 evicted`);
  } finally {
    await beats?.stop();
    await c.close();
  }
});
