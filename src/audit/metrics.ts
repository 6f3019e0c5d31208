/**
 * The audit mirror's Prometheus metrics, on a Registry the entry point passes down (never the
 * global one). Rows per second is `rate(agent_registry_audit_rows_total[1m])`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export function createAuditMetrics(registry: Registry = new Registry(), defaults = true) {
  const registers = [registry];
  if (defaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    mirroredSeq: new Gauge({ name: "agent_registry_audit_mirrored_seq", help: "Highest stream sequence committed to PostgreSQL", registers }),
    streamLastSeq: new Gauge({ name: "agent_registry_audit_stream_last_seq", help: "Last sequence of the events stream, as last seen", registers }),
    lagEvents: new Gauge({ name: "agent_registry_audit_lag_events", help: "Stream sequences not yet committed to PostgreSQL", registers }),
    lagSeconds: new Histogram({
      name: "agent_registry_audit_lag_seconds",
      help: "Time from an event's storage in the stream to its commit in PostgreSQL (the oldest event of each batch)",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    rows: new Counter({ name: "agent_registry_audit_rows_total", help: "Events written to PostgreSQL", registers }),
    duplicateIds: new Counter({ name: "agent_registry_audit_duplicate_ids_total", help: "Stream messages skipped because their event id was already stored", registers }),
    batchSeconds: new Histogram({
      name: "agent_registry_audit_batch_seconds",
      help: "Duration of one batch transaction (rows and position)",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    gaps: new Counter({ name: "agent_registry_audit_gaps_total", help: "Gaps found: ranges of events that left the stream before they were mirrored", registers }),
    gapEvents: new Counter({ name: "agent_registry_audit_gap_events_total", help: "Stream sequences lost in gaps", registers }),
    writer: new Gauge({ name: "agent_registry_audit_writer", help: "1 while this mirror holds the writer lock, 0 while it stands by", registers }),
    databaseUp: new Gauge({ name: "agent_registry_audit_database_up", help: "1 while PostgreSQL answers this mirror", registers }),
    historyRequests: new Counter({ name: "agent_registry_audit_history_requests_total", help: "history requests answered, by outcome (ok or an error code)", labelNames: ["outcome"] as const, registers }),
  };
}

export type AuditMetrics = ReturnType<typeof createAuditMetrics>;
