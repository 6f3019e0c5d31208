/**
 * One agent type driving the shared bucket to its limit (issue 35, item 3). A full bucket
 * refuses every write, for every tenant: under store liveness, heartbeats too. With the
 * default byte budgets, on a real nats-server with a small bucket, the type is refused at its
 * tenth of the bucket, so everyone else keeps heartbeating and registering, and only a truly
 * silent instance is evicted.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, registerSubject, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

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
