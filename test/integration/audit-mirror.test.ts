/**
 * The audit mirror against a real NATS server and the shared PostgreSQL (PROTOCOL.md section
 * 12): every stored event exactly once in stream order, backfill, resume, one writer of two,
 * gaps, U+0000, the `history` op's paging, filters and tenant scoping, and `history_rates`.
 */
import { readFileSync } from "node:fs";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { LEASE_KEY } from "../../src/domain/model/records.js";
import { mirroredRows, startAudit, type TestAudit } from "../harness/audit.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { sql, type TestDatabase } from "../harness/postgres.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry, registerSubject } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { extractBlocks } from "../unit/doc-blocks.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let db: TestDatabase;
let stream: string;
let prefix: string;
const running: TestAudit[] = [];

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  ({ eventsStream: stream, prefix } = configOf(reg));
  c = await RawClient.connect(server.url, prefix);
  db = await withTestDatabase();
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
});
afterAll(async () => {
  for (const a of running) await a.stop().catch(() => undefined);
  await c?.close();
  await reg?.stop();
  await server?.stop();
  await db?.drop();
});

async function audit(env: Record<string, string> = {}): Promise<TestAudit> {
  const a = await startAudit({ natsUrl: server.url, databaseUrl: db.url, prefix, stream, env });
  running.push(a);
  return a;
}

/**
 * Resolves once every event derived from the writes answered so far is in the stream: a write's
 * reply comes before its events are published, and the evictor's lease says how far they are
 * (`published_through`, renewed every third of the lease), so the store's revision now is the mark to wait for.
 */
async function eventsStored(): Promise<void> {
  const bucket = configOf(reg).bucket;
  const target = (await (await jetstreamManager(c.nc)).streams.info(`KV_${bucket}`)).state.last_seq;
  const kv = await new Kvm(c.nc).open(bucket);
  await waitFor(async () => ((await kv.get(LEASE_KEY))?.json<{ published_through?: number }>().published_through ?? -1) >= target, {
    message: `every event derived through revision ${target} stored`,
  });
}

async function streamLastSeq(): Promise<number> {
  return (await (await jetstreamManager(c.nc)).streams.info(stream)).state.last_seq;
}

/** Waits until the database holds the stream up to its last sequence, then compares them one to one. */
async function expectMirrored(): Promise<void> {
  await eventsStored();
  const last = await streamLastSeq();
  try {
    await waitFor(async () => (await sql(db.url, "SELECT seq FROM audit_position"))[0]?.seq == last, { timeoutMs: 20_000, message: `mirrored through ${last}` });
  } catch (e) {
    // A mirror that falls this far behind says why in its log (once seen in CI, unexplained).
    const logs = running.map((a, i) => `mirror ${i}:\n${a.logs.slice(-15).map((l) => JSON.stringify(l)).join("\n")}`).join("\n");
    throw new Error(`${(e as Error).message}\n${logs}`, { cause: e });
  }
  const stored = await readStoredEvents(c.nc, stream);
  const rows = await mirroredRows(db.url);
  const gaps = await sql(db.url, "SELECT first_seq::int AS f, last_seq::int AS l FROM audit_gaps");
  // What is still in the stream is in the database one to one; what left it before it was mirrored is a recorded gap.
  const first = stored[0]?.seq ?? Infinity;
  expect(rows.filter((r) => r.seq >= first).map((r) => r.seq)).toEqual(stored.map((s) => s.seq));
  for (const r of rows) expect(gaps.some((g) => r.seq >= g.f && r.seq <= g.l), `row #${r.seq} inside a gap`).toBe(false);
  for (const s of stored) {
    const row = rows.find((r) => r.seq === s.seq);
    expect(row?.event_id, `row of #${s.seq}`).toBe(s.event.id);
  }
  expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
}

async function register(agentType: string, extra: Record<string, unknown> = {}, instance = "one") {
  const r = await c.request(registerSubject(agentType, extra), { spec: spec(agentType, extra), instance_id: instance });
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  return r;
}

it("backfills a fresh database from the stream's first event, then follows live events", async () => {
  await register("aud-a");
  await register("aud-b");
  await c.request("heartbeat.aud-a.one", { status: "draining" });
  const a = await audit();
  await expectMirrored();
  await waitFor(async () => (await a.get("/readyz")).status === 200, { message: "mirror ready" });
  await register("aud-c");
  await c.request("deregister.aud-b.one", {});
  await expectMirrored();
  const metrics = (await a.get("/metrics")).text;
  expect(metrics).toMatch(new RegExp(`agent_registry_audit_mirrored_seq ${await streamLastSeq()}`));
  expect(metrics).toMatch(/agent_registry_audit_writer 1/);
  const applied = await sql(db.url, "SELECT version FROM schema_migrations");
  expect(applied.map((r) => r.version)).toEqual([1]);
});

it("answers history: filters, cursor paging, oldest first, positions", async () => {
  const client = new RegistryClient(c.nc, { prefix });
  const all = await client.history({ agent_type: "aud-a" });
  expect(all.events.map((e) => e.type)).toEqual(["registry.agent.registered", "registry.agent.status_changed"]);
  expect(all.events[0]).toMatchObject({ specversion: "1.0", subject: "aud-a", data: { instance_id: "one" } });
  expect(all.mirrored_seq).toBe(await streamLastSeq());
  expect(all.stream_last_seq).toBeGreaterThanOrEqual(all.mirrored_seq);
  const typed = await client.history({ agent_type: "aud-b", types: ["registry.agent.deregistered"] });
  expect(typed.events.map((e) => e.data)).toMatchObject([{ reason: "graceful" }]);
  const caps = await client.history({ capability: "aud-c.run" });
  expect(caps.events.map((e) => (e.data as { change: string }).change)).toEqual(["added"]);
  const seen: number[] = [];
  let page = await client.history({ limit: 2 });
  seen.push(...page.events.map((e) => e.seq));
  while (page.next_cursor) {
    page = await client.history({ limit: 2, cursor: page.next_cursor });
    expect(page.events.length).toBeLessThanOrEqual(2);
    seen.push(...page.events.map((e) => e.seq));
  }
  const everything = [];
  for await (const e of client.historyAll({})) everything.push(e.seq);
  expect(seen).toEqual(everything);
  expect([...seen].sort((x, y) => x - y)).toEqual(seen);
  const first = (await client.history({ agent_type: "aud-a" })).events[0]!;
  expect((await client.history({ agent_type: "aud-a", since: first.time })).events[0]?.seq).toBe(first.seq);
  expect((await client.history({ agent_type: "aud-a", until: first.time })).events).toEqual([]);
  const bad = await c.request("history", { limit: 5000 });
  expect(bad.status).toBe(400);
  expect(bad.body.error.code).toBe("invalid_request");
  expect((await c.request("history", { cursor: "nonsense" })).body.error.code).toBe("invalid_request");
  expect((await c.request("history", { nope: 1 })).status).toBe(400);
});

it("scopes history by tenant: a tenant sees shared agents' events and its own", async () => {
  await register("aud-acme", { tenant_scope: "acme" });
  await expectMirrored();
  const shared = await c.request("history", { agent_type: "aud-acme" });
  expect(shared.body.events).toEqual([]);
  const acme = await c.request("tenant.acme.history", {});
  const acmeTypes = new Set(acme.body.events.map((e: any) => e.subject));
  expect(acmeTypes.has("aud-acme")).toBe(true);
  expect(acmeTypes.has("aud-a")).toBe(true);
  const other = await c.request("tenant.other.history", { agent_type: "aud-acme" });
  expect(other.body.events).toEqual([]);
  const otherCaps = await c.request("tenant.other.history", { capability: "aud-acme.run" });
  expect(otherCaps.body.events).toEqual([]);
});

it("stores an event carrying U+0000 without it, and says so", async () => {
  const js = jetstream(c.nc);
  const event = { specversion: "1.0", id: "nul-1", source: "agent-registry", type: "registry.alert.test_nul", time: new Date().toISOString(), subject: "nul", datacontenttype: "application/json", data: { text: "a\u0000b", "k\u0000": 1 } };
  await js.publish(`${prefix}.alert.test_nul`, JSON.stringify(event));
  await expectMirrored();
  const row = (await mirroredRows(db.url)).find((r) => r.event_id === "nul-1")!;
  expect(row.nul_stripped).toBe(true);
  expect(row.event.data).toEqual({ text: "ab", k: 1 });
  expect(running[0]!.logs.some((l) => l.msg.includes("U+0000"))).toBe(true);
});

it("answers history_rates (v1.2): registrations, deregistrations and evictions per bucket, counted by PostgreSQL, scoped by tenant", async () => {
  // Events of a day long past, published as the registry publishes them, so the range holds these only.
  const js = jetstream(c.nc);
  const at = (s: number) => new Date(Date.UTC(2020, 0, 1, 0, 0, s)).toISOString();
  const publish = (id: string, type: string, subject: string, time: string, data: Record<string, unknown>) =>
    js.publish(`${prefix}.agent.${type}.${subject}`, JSON.stringify({ specversion: "1.0", id, source: "agent-registry", type: `registry.agent.${type}`, time, subject, datacontenttype: "application/json", data: { agent_type: subject, ...data } }));
  await publish("rt-1", "registered", "rt-x", at(10), { instance_id: "i", tenant_scope: null });
  await publish("rt-2", "registered", "rt-y", at(20), { instance_id: "i", tenant_scope: null });
  await publish("rt-3", "registered", "rt-t", at(30), { instance_id: "i", tenant_scope: "acme" });
  await publish("rt-4", "deregistered", "rt-x", at(65), { instance_id: "i", reason: "graceful" });
  await publish("rt-5", "deregistered", "rt-y", at(100), { instance_id: "i", reason: "evicted" });
  await publish("rt-6", "deregistered", "rt-t", at(130), { instance_id: "i", reason: "evicted" });
  await expectMirrored();
  const range = { since: at(0), until: at(180) };
  const shared = await c.request("history_rates", { ...range, bucket_seconds: 60 });
  expect(shared.ok, JSON.stringify(shared.body)).toBe(true);
  expect(shared.body).toMatchObject({ since: at(0), until: at(180), bucket_seconds: 60 });
  expect(shared.body.buckets).toEqual([
    { start: at(0), registered: 2, deregistered: 0, evicted: 0 },
    { start: at(60), registered: 0, deregistered: 2, evicted: 1 },
  ]);
  const acme = await c.request("tenant.acme.history_rates", { ...range, bucket_seconds: 60 });
  expect(acme.body.buckets).toEqual([
    { start: at(0), registered: 3, deregistered: 0, evicted: 0 },
    { start: at(60), registered: 0, deregistered: 2, evicted: 1 },
    { start: at(120), registered: 0, deregistered: 1, evicted: 1 },
  ]);
  const wide = await c.request("tenant.acme.history_rates", { ...range, bucket_seconds: 120 });
  expect(wide.body.buckets).toEqual([
    { start: at(0), registered: 3, deregistered: 2, evicted: 1 },
    { start: at(120), registered: 0, deregistered: 1, evicted: 1 },
  ]);
  expect(wide.body.mirrored_seq).toBe(await streamLastSeq());
  // The SDK's historyRates sends the same request.
  const sdk = new RegistryClient(c.nc, { prefix, tenant: "acme" });
  expect((await sdk.historyRates({ ...range, bucket_seconds: 120 })).buckets).toEqual(wide.body.buckets);
  // Bad bodies: refused with the path, nothing asked of the database.
  const refused = async (body: object, path: string) => {
    const r = await c.request("history_rates", body);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.issues.map((i: any) => i.path)).toContain(path);
  };
  await refused({ ...range, bucket_seconds: 59 }, "bucket_seconds");
  await refused({ since: at(0), until: new Date(Date.UTC(2020, 0, 8)).toISOString(), bucket_seconds: 60 }, "bucket_seconds");
  await refused({ since: at(180), until: at(0), bucket_seconds: 60 }, "until");
  await refused({ until: at(180), bucket_seconds: 60 }, "since");
  await refused({ ...range, bucket_seconds: 60, tenant: "acme" }, "tenant");
  expect((await c.request("tenant.Not_A_Tenant.history_rates", { ...range, bucket_seconds: 60 })).body.error.issues[0].path).toBe("tenant");
});

it("resumes from the stored position after a restart, with no duplicate", async () => {
  await running.shift()!.stop();
  await register("aud-d");
  await register("aud-e");
  const a = await audit();
  await expectMirrored();
  expect(a.logs.some((l) => l.msg === "mirroring from the stored position" && (l["position"] as number) > 0)).toBe(true);
});

it("lets one of two mirrors write; the standby takes over when the writer stops", async () => {
  const b = await audit();
  await waitFor(async () => (await b.get("/metrics")).text.includes("agent_registry_audit_writer 0") && (await b.get("/readyz")).status === 200, { message: "second mirror stands by" });
  await register("aud-f");
  await expectMirrored();
  await running.shift()!.stop();
  await waitFor(async () => (await b.get("/metrics")).text.includes("agent_registry_audit_writer 1"), { timeoutMs: 10_000, message: "standby takes over" });
  await register("aud-g");
  await expectMirrored();
});

it("reports a gap when events left the stream before they were mirrored", async () => {
  await running.shift()!.stop();
  await register("aud-h");
  await register("aud-i");
  // Their events stored before the purge, so they are what the gap is made of.
  await eventsStored();
  const before = (await sql(db.url, "SELECT seq FROM audit_position"))[0].seq;
  await (await jetstreamManager(c.nc)).streams.purge(stream);
  await register("aud-j");
  const a = await audit();
  await waitFor(async () => (await sql(db.url, "SELECT count(*)::int AS n FROM audit_gaps"))[0].n === 1, { timeoutMs: 10_000, message: "gap stored" });
  const [gap] = await sql(db.url, "SELECT first_seq::int AS f, last_seq::int AS l FROM audit_gaps");
  expect(gap.f).toBe(Number(before) + 1);
  // The mirror stores the gap, then logs it; the line reaches this process through a pipe.
  await waitFor(() => a.logs.some((l) => l.msg.includes("audit history has a gap") && l["first_seq"] === gap.f && l["last_seq"] === gap.l), { timeoutMs: 10_000, message: "gap logged" });
  await waitFor(async () => (await mirroredRows(db.url)).some((r) => r.type === "registry.alert.audit_gap"), { timeoutMs: 10_000, message: "gap alert mirrored" });
  const alert = (await mirroredRows(db.url)).find((r) => r.type === "registry.alert.audit_gap")!;
  expect(alert.event.data).toEqual({ stream, first_seq: gap.f, last_seq: gap.l, missing: gap.l - gap.f + 1 });
  expect((await a.get("/metrics")).text).toMatch(/agent_registry_audit_gaps_total 1/);
  await expectMirrored();
});

it("runs the SQL queries of docs/audit.md against the mirrored database", async () => {
  const blocks = extractBlocks("docs/audit.md", readFileSync(new URL("../../docs/audit.md", import.meta.url), "utf8")).filter((b) => b.lang === "sql");
  expect(blocks.length).toBeGreaterThan(0);
  for (const b of blocks) {
    // As written (an agent type this database does not know), then about one it holds.
    await sql(db.url, b.code);
    const rows = await sql(db.url, b.code.replaceAll("'code-reviewer'", "'aud-a'"));
    if (b.code.includes("registry.agent.registered")) expect(rows.map((r) => r.version), `docs/audit.md:${b.line}`).toEqual(["1.0.0"]);
    if (b.code.includes("audit_position")) expect(Number(rows[0]?.lost), `docs/audit.md:${b.line}`).toBeGreaterThan(0);
  }
});

it("keeps running while the database cannot be reached, and answers history 503", async () => {
  const a = await startAudit({ natsUrl: server.url, databaseUrl: "postgres://postgres@127.0.0.1:1/nothing", prefix: `${prefix}x`, stream, env: { AUDIT_MAX_RETRY_MS: "200" } });
  running.push(a);
  await waitFor(() => a.logs.filter((l) => l.msg.includes("starting over")).length >= 2, { timeoutMs: 10_000, message: "retries logged" });
  expect((await a.get("/readyz")).status).toBe(503);
  expect((await a.get("/healthz")).status).toBe(200);
  const r = await c.nc.request(`${prefix}x.history`, "{}", { timeout: 5000 });
  expect(r.headers?.get("Nats-Service-Error-Code")).toBe("503");
  expect(JSON.parse(new TextDecoder().decode(r.data)).error.code).toBe("unavailable");
});
