/**
 * The audit mirror's exactly-once copy under faults: the mirror process killed with SIGKILL in
 * the middle of batches, PostgreSQL killed with -9 and restarted during a burst, and the NATS
 * server killed and restarted while the mirror copies. Afterwards every stream sequence has
 * exactly one row, holding the event id the stream acknowledged for it: nothing lost, nothing
 * doubled.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { expect, it } from "vitest";
import { EventStream } from "../../src/adapters/nats/event-stream.js";
import { subjects } from "../../src/protocol/subjects.js";
import { mirroredRows, startAudit } from "../harness/audit.js";
import { canControlNatsServers, withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { pickFreePort } from "../harness/ports.js";
import { createTestDatabase, sql, startPostgres } from "../harness/postgres.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { waitFor } from "../harness/wait.js";

const BURST = Number(process.env.FAULT_AUDIT_EVENTS ?? 5000);

type Setup = { nc: NatsConnection; js: JetStreamClient; prefix: string; stream: string; acked: Map<number, string> };

/** A stream of the registry's shape with nothing else publishing to it, so the acks say exactly what it holds. */
async function setup(server: NatsTestServer): Promise<Setup> {
  const tag = randomBytes(4).toString("hex");
  const prefix = `a${tag}.registry`;
  const stream = `AUDIT_${tag}`;
  const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  await EventStream.open(nc, subjects(prefix), { name: stream, replicas: 1, maxAgeMs: 3600_000, maxBytes: 0, timeoutMs: 5000 });
  return { nc, js: jetstream(nc, { timeout: 10_000 }), prefix, stream, acked: new Map() };
}

/** Publishes `n` events in pipelined chunks, retrying a chunk's failures (the msg id makes a retry a duplicate, not a copy). */
async function burst(s: Setup, n: number, from = 0): Promise<void> {
  const chunk = 200;
  for (let i = from; i < from + n; i += chunk) {
    const ids = Array.from({ length: Math.min(chunk, from + n - i) }, (_, k) => `burst-${i + k}`);
    await Promise.all(
      ids.map(async (id) => {
        const event = { specversion: "1.0", id, source: "agent-registry", type: "registry.alert.burst", time: new Date().toISOString(), subject: "burst", datacontenttype: "application/json", data: { n: id } };
        for (let attempt = 0; ; attempt++) {
          try {
            const ack = await s.js.publish(`${s.prefix}.alert.burst`, JSON.stringify(event), { msgID: id });
            if (!ack.duplicate) s.acked.set(ack.seq, id);
            return;
          } catch (err) {
            if (attempt > 50) throw err;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      }),
    );
  }
}

const position = async (url: string): Promise<number> => Number((await sql(url, "SELECT seq FROM audit_position"))[0]?.seq ?? 0);

async function expectExactlyOnce(url: string, s: Setup): Promise<void> {
  const last = Math.max(...s.acked.keys());
  await waitFor(async () => (await position(url)) === last, { timeoutMs: 90_000, intervalMs: 250, message: `mirrored through ${last}` });
  const rows = await mirroredRows(url);
  expect(rows.length).toBe(s.acked.size);
  for (const r of rows) expect(r.event_id, `#${r.seq}`).toBe(s.acked.get(r.seq));
  expect((await sql(url, "SELECT count(*)::int AS n FROM audit_gaps"))[0].n).toBe(0);
}

function spawnMirror(env: Record<string, string>, args: string[] = []): { child: ChildProcess; logs: string[]; exited: Promise<unknown> } {
  const logs: string[] = [];
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "audit", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const keep = (b: Buffer) => logs.push(...b.toString().split("\n").filter((l) => l.trim()));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise((r) => child.once("exit", (code) => r(code)));
  return { child, logs, exited };
}

it.runIf(canControlNatsServers())("a mirror killed with SIGKILL in the middle of batches loses and doubles nothing", async () => {
  await using server = await withNatsServer();
  const s = await setup(server);
  const db = await withTestDatabase();
  try {
    await burst(s, BURST);
    const port = await pickFreePort();
    const env = { NATS_URL: server.url, DATABASE_URL: db.url, REGISTRY_PREFIX: s.prefix, REGISTRY_EVENTS_STREAM: s.stream, AUDIT_HTTP_PORT: String(port), AUDIT_HTTP_HOST: "127.0.0.1", AUDIT_BATCH_SIZE: "50" };
    const migrating = spawnMirror(env, ["--migrate-only"]);
    expect(await migrating.exited, migrating.logs.join("\n")).toBe(0);
    expect(migrating.logs.some((l) => l.includes("applied audit schema migrations"))).toBe(true);
    const last = Math.max(...s.acked.keys());
    // Three kills, each once the mirror has made progress since the previous one.
    for (let kill = 0; kill < 3; kill++) {
      const before = await position(db.url);
      const m = spawnMirror(env);
      await waitFor(async () => (await position(db.url)) > before || (await position(db.url)) === last, { timeoutMs: 60_000, intervalMs: 20, message: `mirror ${kill} makes progress\n${m.logs.join("\n")}` });
      m.child.kill("SIGKILL");
      await m.exited;
    }
    const m = spawnMirror(env);
    try {
      await burst(s, 500, BURST);
      await expectExactlyOnce(db.url, s);
    } finally {
      m.child.kill("SIGTERM");
      await m.exited;
    }
  } finally {
    await s.nc.close();
    await db.drop();
  }
});

it.runIf(canControlNatsServers())("PostgreSQL killed with -9 and restarted during a burst: nothing lost, nothing doubled", async () => {
  await using server = await withNatsServer();
  const s = await setup(server);
  const pg = await startPostgres();
  const db = await createTestDatabase(pg.url);
  const audit = await startAudit({ natsUrl: server.url, databaseUrl: db.url, prefix: s.prefix, stream: s.stream, env: { AUDIT_BATCH_SIZE: "100", AUDIT_MAX_RETRY_MS: "500" } });
  try {
    const publishing = burst(s, BURST);
    await waitFor(async () => (await position(db.url)) >= Math.min(1000, BURST / 4), { timeoutMs: 60_000, intervalMs: 20, message: "mirror copies" });
    await pg.kill();
    await waitFor(() => audit.logs.some((l) => l.msg.includes("starting over")), { timeoutMs: 30_000, message: "mirror notices the database is gone" });
    expect((await audit.get("/readyz")).status).toBe(503);
    await pg.start();
    await publishing;
    await expectExactlyOnce(db.url, s);
    await waitFor(async () => (await audit.get("/readyz")).status === 200, { timeoutMs: 20_000, message: "ready again" });
  } finally {
    await audit.stop();
    await s.nc.close();
    await pg.stop();
  }
});

it.runIf(canControlNatsServers())("the NATS server killed and restarted while the mirror copies: nothing lost, nothing doubled", async () => {
  await using server = await withNatsServer();
  const s = await setup(server);
  const db = await withTestDatabase();
  const audit = await startAudit({ natsUrl: server.url, databaseUrl: db.url, prefix: s.prefix, stream: s.stream, env: { AUDIT_BATCH_SIZE: "100", AUDIT_MAX_RETRY_MS: "500" } });
  try {
    await burst(s, BURST);
    await waitFor(async () => (await position(db.url)) >= Math.min(1000, BURST / 4), { timeoutMs: 60_000, intervalMs: 20, message: "mirror copies" });
    await server.kill();
    await server.restart();
    await burst(s, 500, BURST);
    await expectExactlyOnce(db.url, s);
  } finally {
    await audit.stop();
    await s.nc.close();
    await db.drop();
  }
});
