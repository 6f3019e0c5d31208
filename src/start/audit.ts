/**
 * The audit mirror beside the API (DATABASE_URL).
 */
import type { StartContext, Nats } from "./context.js";
import { eventsReadStream } from "../config/region.js";

/**
 * With DATABASE_URL, the audit mirror of docs/audit.md beside the API, on this replica's
 * connection and metrics registry, with the mirror's default settings: every replica runs one,
 * one of them writes (a PostgreSQL advisory lock), all answer `history`. Not part of readiness:
 * the registry serves whether or not its audit database answers (the mirror retries by itself).
 * In regional mode it mirrors the region's global stream, every region's events, each row keyed
 * by region and id; each region then needs a database of its own (docs/audit.md).
 */
export async function serveAudit(ctx: StartContext, { nc }: Nats): Promise<void> {
  const url = ctx.config.databaseUrl;
  if (url === undefined) return;
  // Loaded only when asked for: pg is not part of every start.
  const [{ startMirror }, { createAuditMetrics }, { loadAuditConfig }] = await Promise.all([
    import("../audit/run.js"),
    import("../audit/metrics.js"),
    import("../config/audit.js"),
  ]);
  const config = loadAuditConfig({}, {}, { databaseUrl: url, eventsStream: eventsReadStream(ctx.config) });
  const log = ctx.root.child({ component: "audit" });
  const parts = await startMirror({ nc, config, prefix: ctx.config.prefix, version: ctx.version, log, metrics: createAuditMetrics(ctx.metrics.registry, false) });
  ctx.teardown.defer("stopping the audit mirror", () => parts.close());
}
