/**
 * The audit mirror: how fast it backfills a stream into PostgreSQL, and how far behind it is
 * at a steady 1,000 events/s. The mirror is `agent-registry audit` as a process of its own
 * (the compiled build), against the PostgreSQL at PG_BENCH_URL, or a private one the scenario
 * starts on a free port, in a database created for the run. Baselines, measured in the same run: the stream read
 * alone (an ordered consumer draining it, no database), and the delivery lag of the same live
 * events to an ordered consumer.
 */
import { spawn } from "node:child_process";
import { jetstream, DeliverPolicy, type JetStreamClient } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { EventStream } from "../../src/adapters/nats/event-stream.js";
import { subjects } from "../../src/protocol/subjects.js";
import { pickFreePort } from "../../test/harness/ports.js";
import { createTestDatabase, sql, startPostgres, type PostgresInstance } from "../../test/harness/postgres.js";
import { REGISTRY_MAIN } from "../lib/build.js";
import { ROOT, sleep, startServer } from "../lib/processes.js";
import { fmt, ratio, type Context, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import { Recorder, round } from "../lib/stats.js";

const PREFIX = "bench.registry";
const STREAM = "BENCH_EVENTS";

const event = (i: number): string =>
  JSON.stringify({
    specversion: "1.0",
    id: `bench-${i}`,
    source: "agent-registry",
    type: "registry.agent.registered",
    time: new Date().toISOString(),
    subject: `bench-agent-${i % 500}`,
    datacontenttype: "application/json",
    data: { agent_type: `bench-agent-${i % 500}`, version: "1.0.0", instance_id: `i${i}`, tenant_scope: null, first_instance: false, spec_changed: false, revision: i },
  });

const publish = (js: JetStreamClient, i: number) => js.publish(`${PREFIX}.agent.registered.bench-agent-${i % 500}`, event(i), { msgID: `bench-${i}` });

export const auditScenario: Scenario = {
  name: "audit",
  title: "Audit mirror (PostgreSQL)",
  aliases: ["audit-backfill", "audit-lag"],
  method:
    "The bench process fills a stream with 50,000 registry events, then spawns `agent-registry audit` against a fresh " +
    "database and times the backfill from its first committed row to the last (the baseline: an ordered consumer draining " +
    "the same stream, no database). Then it publishes 1,000 events/s for 30 s; each event's lag is the time from its `time` " +
    "to its row's insert (`mirrored_at`), beside the delivery lag of the same events to an ordered consumer.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const total = ctx.quick ? 2000 : 50_000;
    const steadySeconds = ctx.quick ? 3 : 30;
    // PG_BENCH_URL: an existing server; otherwise a private one for this scenario, on a free port.
    const privatePg: PostgresInstance | null = process.env.PG_BENCH_URL ? null : await startPostgres();
    const server = await startServer();
    const nc = await connect({ servers: server.url });
    const db = await createTestDatabase(process.env.PG_BENCH_URL ?? privatePg!.url);
    const dbUrl = db.url;
    const httpPort = await pickFreePort();
    let child: ReturnType<typeof spawn> | undefined;
    try {
      await EventStream.open(nc, subjects(PREFIX), { name: STREAM, replicas: 1, maxAgeMs: 3600_000, maxBytes: 0, timeoutMs: 10_000 });
      const js = jetstream(nc, { timeout: 10_000 });
      for (let i = 0; i < total; i += 500) await Promise.all(Array.from({ length: Math.min(500, total - i) }, (_, k) => publish(js, i + k)));
      ctx.log(`stream filled with ${fmt(total)} events`);

      // Baseline: the stream read alone.
      const readStarted = performance.now();
      const reader = await js.consumers.get(STREAM, { deliver_policy: DeliverPolicy.All });
      const readIter = await reader.consume();
      let read = 0;
      for await (const _m of readIter) if (++read === total) break;
      const readRate = total / ((performance.now() - readStarted) / 1000);
      await reader.delete().catch(() => undefined);

      const position = async () => Number((await sql<{ seq: string }>(dbUrl, "SELECT seq FROM audit_position").catch(() => []))[0]?.seq ?? 0);
      const logs: string[] = [];
      child = spawn(process.execPath, [REGISTRY_MAIN, "audit"], {
        cwd: ROOT,
        env: { ...process.env, NATS_URL: server.url, DATABASE_URL: dbUrl, REGISTRY_PREFIX: PREFIX, REGISTRY_EVENTS_STREAM: STREAM, AUDIT_HTTP_PORT: String(httpPort), AUDIT_HTTP_HOST: "127.0.0.1", LOG_LEVEL: "warn" },
        stdio: ["ignore", "ignore", "pipe"],
      });
      child.stderr!.on("data", (b: Buffer) => logs.push(...b.toString().split("\n").filter(Boolean)));
      let firstRowAt: number | undefined;
      let firstRowSeq = 0;
      const deadline = performance.now() + 300_000;
      for (let p = 0; p < total; p = await position()) {
        if (p > 0 && firstRowAt === undefined) [firstRowAt, firstRowSeq] = [performance.now(), p];
        ctx.check(performance.now() < deadline && child.exitCode === null, `the mirror did not backfill in time:\n${logs.slice(-10).join("\n")}`);
        await sleep(10);
      }
      const backfillRate = (total - firstRowSeq) / ((performance.now() - (firstRowAt ?? performance.now())) / 1000);
      ctx.log(`backfill: ${fmt(backfillRate)} events/s (stream read alone ${fmt(readRate)}/s)`);

      // Steady 1,000 events/s, 50 every 50 ms, watched by an ordered consumer for the baseline.
      const delivery = new Recorder();
      const watcher = await js.consumers.get(STREAM, { deliver_policy: DeliverPolicy.New });
      const watched = await watcher.consume();
      void (async () => {
        for await (const m of watched) delivery.add(Date.now() - Date.parse((m.json() as { time: string }).time));
      })().catch(() => undefined);
      const steadyFrom = total + 1;
      let next = total;
      const pending: Promise<unknown>[] = [];
      const until = Date.now() + steadySeconds * 1000;
      while (Date.now() < until) {
        const tick = Date.now();
        for (let k = 0; k < 50; k++) pending.push(publish(js, next++));
        await sleep(Math.max(0, 50 - (Date.now() - tick)));
      }
      await Promise.all(pending);
      for (const deadlineSteady = performance.now() + 60_000; (await position()) < next; await sleep(20)) {
        ctx.check(performance.now() < deadlineSteady, "the mirror did not catch up after the steady phase");
      }
      watched.stop();
      await watcher.delete().catch(() => undefined);
      const lag = new Recorder();
      for (const r of await sql<{ ms: number }>(dbUrl, "SELECT extract(epoch FROM (mirrored_at - time)) * 1000 AS ms FROM audit_events WHERE seq >= $1", [steadyFrom])) lag.add(Number(r.ms));
      const rows = await sql<{ n: number; ids: number }>(dbUrl, "SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS ids FROM audit_events");
      ctx.check(rows[0]?.n === next && rows[0]?.ids === next, `expected ${next} distinct rows, found ${JSON.stringify(rows[0])}`);
      const l = lag.summary();
      const d = delivery.summary();
      return {
        rows: [
          {
            measure: `audit backfill, ${fmt(total)} events into a fresh database`,
            figure: `${fmt(backfillRate)} events/s`,
            baseline: `stream read alone ${fmt(readRate)} events/s (${ratio(backfillRate / readRate)})`,
            target: ">= 5,000 events/s",
            pass: backfillRate >= 5000,
          },
          {
            measure: `audit lag at 1,000 events/s for ${steadySeconds} s (event time to row insert)`,
            figure: `p99 ${fmt(l.p99)} ms (p50 ${fmt(l.p50)} ms, max ${fmt(l.max)} ms)`,
            baseline: `delivery to an ordered consumer p99 ${fmt(d.p99)} ms`,
            target: "p99 <= 500 ms",
            pass: l.p99 <= 500,
          },
        ],
        notes: [`every one of ${fmt(next)} events is stored exactly once`],
        details: { total, readRate: round(readRate), backfillRate: round(backfillRate), lag: l, delivery: d },
      };
    } finally {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, sleep(10_000)]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      await nc.close();
      await server.stop();
      await db.drop().catch(() => undefined);
      await privatePg?.stop();
    }
  },
};
