/**
 * Every Prometheus metric the registry exports, registered on one prom-client Registry that
 * the composition root passes down (never the global one, so tests and several registries in
 * one process do not collide). deploy/grafana and deploy/prometheus/alerts.yml are checked
 * against these names by test/unit/config/deploy-files.test.ts.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { BoundHistogram } from "./bound-histogram.js";

/** Request latency buckets in seconds: answers come from memory, so most are sub-millisecond. */
export const REQUEST_DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
] as const;

/** Why an instance left (PROTOCOL.md section 5, `registry.agent.deregistered`). */
export const DEREGISTRATION_REASONS = ["graceful", "evicted", "operator"] as const;

export function createMetrics(registry: Registry = new Registry()) {
  const registers = [registry];
  // Counts kept as plain numbers where they happen (the request observer, the heartbeat events
  // that gave way) and added to their counters when those are read (each of them runs these
  // first): an inc on a prom-client counter hashes its labels, and these come by the tens of
  // thousands a second.
  const pendingCounts: Array<() => void> = [];
  const collect = (): void => {
    for (const flush of pendingCounts) flush();
  };
  // Read when scraped; the composition root points it at the NATS connection.
  const sources = { writeBacklogBytes: (): number => 0 };

  const metrics = {
    registry,
    pendingCounts,
    sources,

    // Fleet, as the local view sees it (recomputed from the view, hence gauges).
    agents: new Gauge({
      name: "agent_registry_agents",
      help: "Agent types known to this replica's view, by aggregate status",
      labelNames: ["status"] as const,
      registers,
    }),
    instances: new Gauge({
      name: "agent_registry_instances",
      help: "Live agent instances in this replica's view, by status",
      labelNames: ["status"] as const,
      registers,
    }),

    // Writes.
    registrations: new Counter({
      name: "agent_registry_registrations_total",
      help: "Register requests handled, by outcome (ok or an error code)",
      labelNames: ["outcome"] as const,
      registers,
      collect,
    }),
    heartbeats: new Counter({
      name: "agent_registry_heartbeats_total",
      help: "Heartbeats handled, by outcome (ok or an error code)",
      labelNames: ["outcome"] as const,
      registers,
      collect,
    }),
    deregistrations: new Counter({
      name: "agent_registry_deregistrations_total",
      help: "Instances removed, by reason (graceful, evicted, operator)",
      labelNames: ["reason"] as const,
      registers,
    }),
    schemaWorkersLost: new Counter({
      name: "agent_registry_schema_workers_lost_total",
      help: "Schema check worker threads replaced, by reason (timeout: a schema compiled too long; crash)",
      labelNames: ["reason"] as const,
      registers,
    }),
    payloadCheckWorkersLost: new Counter({
      name: "agent_registry_payload_check_workers_lost_total",
      help: "Payload check worker threads replaced, by reason (timeout: a check ran past REGISTRY_PAYLOAD_CHECK_TIMEOUT_MS and was refused; crash; boot: none could start)",
      labelNames: ["reason"] as const,
      registers,
    }),
    evictions: new Counter({
      name: "agent_registry_evictions_total",
      help: "Instances evicted by this replica for missed heartbeats",
      registers,
    }),
    suspectMarks: new Counter({
      name: "agent_registry_suspect_marks_total",
      help: "Memory liveness: suspect marks this replica stored, as the evicting one, for instances it had not heard for 1.5 intervals (a live instance's next heartbeat clears its mark)",
      registers,
    }),
    heartbeatsFromMemory: new Counter({
      name: "agent_registry_heartbeats_from_memory_total",
      help: "Memory liveness: heartbeats this replica answered without a store write",
      registers,
    }),
    heardBatchesLost: new Counter({
      name: "agent_registry_heard_batches_lost_total",
      help: "Memory liveness: batches of the heard fan-out from other replicas that never arrived (gaps in their sequence); each can turn live instances into a suspect mark and a clear",
      registers,
    }),
    evictorStalls: new Counter({
      name: "agent_registry_evictor_stalls_total",
      help: "Times the evicting replica found it had not run for max(lease period, 4 eviction ticks), or its wall clock stepped, and gave every instance a new window",
      registers,
    }),

    // Every service endpoint, reads and writes alike.
    requests: new Counter({
      name: "agent_registry_requests_total",
      help: "Service requests answered, by endpoint and outcome (ok or an error code)",
      labelNames: ["endpoint", "outcome"] as const,
      registers,
      collect,
    }),
    requestDuration: new BoundHistogram({
      name: "agent_registry_request_duration_seconds",
      help: "Time from receiving a service request to sending its reply",
      labelNames: ["endpoint", "outcome"] as const,
      buckets: REQUEST_DURATION_BUCKETS,
      registers,
    }),

    // Store and view.
    storeConflicts: new Counter({
      name: "agent_registry_store_conflicts_total",
      help: "Compare-and-set writes that lost a race and were retried",
      registers,
    }),
    storeWriteDuration: new BoundHistogram({
      name: "agent_registry_store_write_duration_seconds",
      help: "Time from a store write's call to its acknowledgement or failure (a heartbeat's, a registration's), this process's event-loop delays included",
      labelNames: [] as const,
      buckets: REQUEST_DURATION_BUCKETS,
      registers,
    }),
    storeFailures: new Counter({
      name: "agent_registry_store_failures_total",
      help: "Store operations that failed (timeouts, JetStream errors)",
      registers,
    }),
    schemaRefsUnresolved: new Counter({
      name: "agent_registry_schema_refs_unresolved_total",
      help: "Named schema refs served unresolved because their schema is missing from the store (deleted by hand); each missing schema version is logged once",
      registers,
    }),
    storeRecordsUnreadable: new Counter({
      name: "agent_registry_store_records_unreadable_total",
      help: "Bucket entries skipped because the registry could not read their record (not JSON, another shape, a foreign key); each key is logged once",
      registers,
    }),
    viewRevision: new Gauge({
      name: "agent_registry_view_revision",
      help: "Last bucket revision applied to this replica's view",
      registers,
    }),
    viewLag: new Gauge({
      name: "agent_registry_view_lag_revisions",
      help: "Bucket revisions written but not yet applied to this replica's view",
      registers,
    }),
    watchRestarts: new Counter({
      name: "agent_registry_watch_restarts_total",
      help: "Times the bucket watch feeding the view was recreated",
      registers,
    }),

    // Liveness duty.
    evictorLeader: new Gauge({
      name: "agent_registry_evictor_leader",
      help: "1 while this replica holds the evictor lease, else 0",
      registers,
    }),
    statusChangesHeld: new Counter({
      name: "agent_registry_status_changes_held_total",
      help: "Instance status changes held back by REGISTRY_STATUS_CHANGES_PER_SECOND (the latest is written when allowed)",
      registers,
    }),
    limitUsage: new Gauge({
      name: "agent_registry_limit_usage_ratio",
      help: "How full each quota is, 0..1: the fullest agent type (instances_per_type), the fullest tenant (types_per_tenant), the bucket (bucket_bytes)",
      labelNames: ["limit"] as const,
      registers,
    }),
    selfPreservationActive: new Gauge({
      name: "agent_registry_self_preservation_active",
      help: "1 while evictions are paused because too many instances would go at once",
      registers,
    }),

    // NATS connection and events.
    natsConnected: new Gauge({
      name: "agent_registry_nats_connected",
      help: "1 while the NATS connection is up, else 0",
      registers,
    }),
    natsReconnects: new Counter({
      name: "agent_registry_nats_reconnects_total",
      help: "Reconnections of the NATS connection",
      registers,
    }),
    natsWriteBacklog: new Gauge({
      name: "agent_registry_nats_write_backlog_bytes",
      help: "Bytes written to the NATS connection that its socket has not yet sent: above a few MB, nats-server is not reading as fast as the registry writes",
      registers,
      collect() {
        this.set(sources.writeBacklogBytes());
      },
    }),
    heartbeatEventsDropped: new Counter({
      name: "agent_registry_heartbeat_events_dropped_total",
      help: "registry.agent.heartbeat events not published because the NATS connection had over 8 MiB of unsent output",
      registers,
      collect,
    }),
    eventsPublished: new Counter({
      name: "agent_registry_events_published_total",
      help: "Registry events published (stored and core NATS)",
      registers,
    }),
    eventPublishFailures: new Counter({
      name: "agent_registry_event_publish_failures_total",
      help: "Registry events whose publish failed (they are retried from the store)",
      registers,
    }),
    eventsUnrecoverable: new Counter({
      name: "agent_registry_events_unrecoverable_total",
      help: "Keys (or, past the recovery bound, writes) whose events after the last stored one a start could not derive",
      registers,
    }),

    // Static registry file.
    registryFileErrors: new Counter({
      name: "agent_registry_registry_file_errors_total",
      help: "Loads of the static registry file that failed (the previous content stays)",
      registers,
    }),
    trustFileErrors: new Counter({
      name: "agent_registry_trust_file_errors_total",
      help: "Reloads of the trust file (or a JWKS file it names) that failed (the last good trust roots stay)",
      registers,
    }),
    trustJwksFetchErrors: new Counter({
      name: "agent_registry_trust_jwks_fetch_errors_total",
      help: "Fetches of a trust file's jwks_url that failed (the last good keys stay)",
      registers,
    }),
    trustRejudged: new Counter({
      name: "agent_registry_trust_rejudged_total",
      help: "Stored specs whose trust standing this replica rewrote after the trust roots changed or a grant's validity ended",
      registers,
    }),

    buildInfo: new Gauge({
      name: "agent_registry_build_info",
      help: "Always 1; the labels carry the registry version and the NATS server version",
      labelNames: ["version", "nats_server_version"] as const,
      registers,
    }),
  };

  // Label sets that are known up front start at 0, so rate() and absent() work from the
  // first scrape instead of after the first event.
  for (const reason of DEREGISTRATION_REASONS) metrics.deregistrations.inc({ reason }, 0);

  collectDefaultMetrics({ register: registry });
  return metrics;
}

export type RegistryMetrics = ReturnType<typeof createMetrics>;

/** Sets the build-info series, replacing an earlier one (the NATS server version can change on reconnect). */
export function setBuildInfo(metrics: RegistryMetrics, version: string, natsServerVersion: string): void {
  metrics.buildInfo.reset();
  metrics.buildInfo.set({ version, nats_server_version: natsServerVersion }, 1);
}

/** The per-request observer the endpoints call: one place maps an outcome to every series it feeds. */
export function requestObserver(metrics: RegistryMetrics): (endpoint: string, outcome: string, seconds: number) => void {
  // The series of each (endpoint, outcome) are bound once, keyed endpoint first, then outcome,
  // so a request builds no key string and hashes no labels: it observes its duration into a
  // bound histogram series and adds one to a plain number, which reaches the prom-client
  // counters when they are read (a prom-client child hashes its labels on every inc: 3.4-4.7 µs
  // a request for the three series a heartbeat fed, bound-histogram.ts).
  // Endpoints and outcomes (ok or an error code) are a short fixed list, so the maps stay small.
  const bound = new Map<string, Map<string, (seconds: number) => void>>();
  return (endpoint, outcome, seconds) => {
    let byOutcome = bound.get(endpoint);
    if (!byOutcome) bound.set(endpoint, (byOutcome = new Map()));
    let record = byOutcome.get(outcome);
    if (!record) {
      const requests = metrics.requests.labels({ endpoint, outcome });
      const duration = metrics.requestDuration.bind({ endpoint, outcome });
      const writes = endpoint === "register" ? metrics.registrations.labels({ outcome }) : endpoint === "heartbeat" ? metrics.heartbeats.labels({ outcome }) : null;
      const unavailable = outcome === "unavailable";
      let uncounted = 0;
      metrics.pendingCounts.push(() => {
        if (uncounted === 0) return;
        requests.inc(uncounted);
        writes?.inc(uncounted);
        uncounted = 0;
      });
      record = (s) => {
        uncounted++;
        duration(s);
        if (unavailable) metrics.storeFailures.inc();
      };
      byOutcome.set(outcome, record);
    }
    record(seconds);
  };
}
