/**
 * The audit mirror's composition: the ops server first (so /healthz answers while the rest
 * waits for its dependencies), then NATS (retried until it answers), the query pool, the
 * `history` endpoints and the mirror loop; torn down in reverse order when `until` resolves.
 * Neither PostgreSQL nor NATS being down makes the process exit: it logs, backs off, and
 * /readyz says what it waits for.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { ConnectionOptions, NatsConnection } from "@nats-io/nats-core";
import pg from "pg";
import { createOpsServer, type HealthReport } from "../kit/ops-server.js";
import { connectUntilUp } from "../kit/connect-until-up.js";
import { DEFAULT_MAX_PAYLOAD } from "../kit/nats-limits.js";
import type { Logger } from "../kit/logger.js";
import { TeardownStack } from "../teardown-stack.js";
import { AuditWriter } from "./audit-store.js";
import type { AuditConfig } from "../config/audit.js";
import { redactUrl } from "../kit/log-redaction.js";
import { startHistoryEndpoint } from "./history-endpoint.js";
import { createAuditMetrics, type AuditMetrics } from "./metrics.js";
import { migrate } from "./migrations.js";
import { Mirror } from "./mirror.js";

export type RunAuditDeps = {
  config: AuditConfig;
  nats: ConnectionOptions;
  prefix: string;
  version: string;
  log: Logger;
  /** Resolves when the process is asked to stop. */
  until: Promise<unknown>;
  /** Called with the ops server's port once it listens (tests bind port 0). */
  onListening?: (port: number) => void;
};

const STREAM_INFO_MAX_AGE_MS = 1000;

export async function runAudit(deps: RunAuditDeps): Promise<void> {
  const { config, log } = deps;
  const abort = new AbortController();
  void deps.until.then(() => abort.abort());
  const teardown = new TeardownStack(log);
  const metrics = createAuditMetrics();
  let nc: NatsConnection | undefined;
  let mirror: Mirror | undefined;
  let endpointUp = false;
  const health = (): HealthReport => {
    const checks = {
      nats: { ok: nc !== undefined && !nc.isClosed(), ...(nc ? {} : { detail: "connecting" }) },
      database: { ok: mirror?.databaseUp === true, ...(mirror?.databaseUp ? {} : { detail: "PostgreSQL not reached" }) },
      mirror: { ok: mirror?.state === "writing" || mirror?.state === "standby", detail: mirror?.state ?? "starting" },
      history: { ok: endpointUp },
    };
    return { live: true, ready: Object.values(checks).every((c) => c.ok), checks };
  };
  try {
    const ops = createOpsServer({ host: config.httpHost, port: config.httpPort, allowedHosts: config.httpAllowedHosts, allowedHostsSetting: "AUDIT_HTTP_ALLOWED_HOSTS", registry: metrics.registry, health, logger: log });
    const port = await ops.listen();
    teardown.defer("ops server", () => ops.close());
    deps.onListening?.(port);
    log.info({ database: redactUrl(config.databaseUrl), stream: config.eventsStream, ops_port: port }, "audit mirror starting");

    try {
      nc = await connectUntilUp(deps.nats, { signal: abort.signal, log });
    } catch (err) {
      if (abort.signal.aborted) return;
      throw err;
    }
    const conn = nc;
    teardown.defer("NATS connection", () => conn.drain().catch(() => conn.close()));

    const parts = await startMirror({ nc: conn, config, prefix: deps.prefix, version: deps.version, log, metrics });
    mirror = parts.mirror;
    endpointUp = true;
    teardown.defer("audit mirror", () => parts.close());
    await deps.until;
    log.info("audit mirror stopping");
  } finally {
    abort.abort();
    await teardown.run();
  }
}

export type MirrorParts = { mirror: Mirror; close(): Promise<void> };

/**
 * The mirror loop and the `history` endpoints on a connection someone else opened: the body of
 * `agent-registry audit`, and what `serve` runs beside the API when DATABASE_URL is set.
 */
export async function startMirror(deps: { nc: NatsConnection; config: AuditConfig; prefix: string; version: string; log: Logger; metrics: AuditMetrics }): Promise<MirrorParts> {
  const { nc, config, log, metrics } = deps;
  // Queries get their own pool, so a long history query never delays the writer's commits.
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4, connectionTimeoutMillis: 3000, application_name: "agent-registry-audit-history" });
  // An idle pooled client whose server went away emits 'error'; unhandled it would end the process.
  pool.on("error", (err) => log.warn({ err }, "an idle PostgreSQL connection of the history pool broke"));
  const mirror = new Mirror({
    nc,
    databaseUrl: config.databaseUrl,
    stream: config.eventsStream,
    prefix: deps.prefix,
    batchSize: config.batchSize,
    retentionDays: config.retentionDays,
    standbyRetryMs: config.standbyRetryMs,
    maxRetryMs: config.maxRetryMs,
    log,
    metrics,
  });
  let service: Awaited<ReturnType<typeof startHistoryEndpoint>>;
  try {
    const jsm = await jetstreamManager(nc);
    let seen = { at: 0, seq: 0 };
    const streamLastSeq = async (): Promise<number> => {
      if (Date.now() - seen.at > STREAM_INFO_MAX_AGE_MS) {
        const info = await jsm.streams.info(config.eventsStream).catch(() => undefined);
        seen = { at: Date.now(), seq: info?.state.last_seq ?? seen.seq };
      }
      return Math.max(seen.seq, mirror.streamLastSeq);
    };
    service = await startHistoryEndpoint({
      nc,
      prefix: deps.prefix,
      version: deps.version,
      source: { pool, stream: config.eventsStream, streamLastSeq, maxPayload: () => nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD },
      log,
      metrics,
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  mirror.start();
  return {
    mirror,
    // Writer first (its last batch commits or rolls back), then the endpoints, then the pool they use.
    async close() {
      await mirror.stop();
      await service.stop().catch((err: unknown) => log.warn({ err }, "stopping the history endpoints failed"));
      await pool.end().catch(() => undefined);
    },
  };
}

/** `--migrate-only`: applies the migrations, retrying while PostgreSQL cannot be reached, then returns. */
export async function migrateOnly(config: AuditConfig, log: Logger, until: Promise<unknown>): Promise<number[]> {
  let stopped = false;
  void until.then(() => (stopped = true));
  for (let attempt = 1; ; attempt++) {
    let writer: AuditWriter | undefined;
    try {
      writer = await AuditWriter.connect(config.databaseUrl);
      const applied = await migrate(writer.connection);
      log.info({ versions: applied, database: redactUrl(config.databaseUrl) }, applied.length > 0 ? "applied audit schema migrations" : "the audit schema is up to date");
      return applied;
    } catch (err) {
      if (stopped || attempt >= 10) throw err;
      const waitMs = Math.min(config.maxRetryMs, 250 * 2 ** attempt);
      log.warn({ err, attempt, retry_in_ms: waitMs }, "cannot migrate the audit database yet; retrying");
      await new Promise((r) => setTimeout(r, waitMs));
    } finally {
      await writer?.close();
    }
  }
}
