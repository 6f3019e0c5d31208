import { Registry, register as globalRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { DEREGISTRATION_REASONS, REQUEST_DURATION_BUCKETS, createMetrics, requestObserver, setBuildInfo } from "../../../../src/adapters/http/metrics.js";

const EXPECTED = {
  agent_registry_agents: { type: "gauge", labels: ["status"] },
  agent_registry_instances: { type: "gauge", labels: ["status"] },
  agent_registry_registrations_total: { type: "counter", labels: ["outcome"] },
  agent_registry_heartbeats_total: { type: "counter", labels: ["outcome"] },
  agent_registry_deregistrations_total: { type: "counter", labels: ["reason"] },
  agent_registry_schema_workers_lost_total: { type: "counter", labels: ["reason"] },
  agent_registry_payload_check_workers_lost_total: { type: "counter", labels: ["reason"] },
  agent_registry_evictions_total: { type: "counter", labels: [] },
  agent_registry_evictor_stalls_total: { type: "counter", labels: [] },
  agent_registry_suspect_marks_total: { type: "counter", labels: [] },
  agent_registry_heartbeats_from_memory_total: { type: "counter", labels: [] },
  agent_registry_heard_batches_lost_total: { type: "counter", labels: [] },
  agent_registry_requests_total: { type: "counter", labels: ["endpoint", "outcome"] },
  agent_registry_request_duration_seconds: { type: "histogram", labels: ["endpoint", "outcome"] },
  agent_registry_store_conflicts_total: { type: "counter", labels: [] },
  agent_registry_store_failures_total: { type: "counter", labels: [] },
  agent_registry_store_write_duration_seconds: { type: "histogram", labels: [] },
  agent_registry_store_records_unreadable_total: { type: "counter", labels: [] },
  agent_registry_schema_refs_unresolved_total: { type: "counter", labels: [] },
  agent_registry_events_unrecoverable_total: { type: "counter", labels: [] },
  agent_registry_view_revision: { type: "gauge", labels: [] },
  agent_registry_view_lag_revisions: { type: "gauge", labels: [] },
  agent_registry_evictor_leader: { type: "gauge", labels: [] },
  agent_registry_nats_connected: { type: "gauge", labels: [] },
  agent_registry_nats_reconnects_total: { type: "counter", labels: [] },
  agent_registry_nats_write_backlog_bytes: { type: "gauge", labels: [] },
  agent_registry_heartbeat_events_dropped_total: { type: "counter", labels: [] },
  agent_registry_events_published_total: { type: "counter", labels: [] },
  agent_registry_event_publish_failures_total: { type: "counter", labels: [] },
  agent_registry_self_preservation_active: { type: "gauge", labels: [] },
  agent_registry_limit_usage_ratio: { type: "gauge", labels: ["limit"] },
  agent_registry_status_changes_held_total: { type: "counter", labels: [] },
  agent_registry_registry_file_errors_total: { type: "counter", labels: [] },
  agent_registry_trust_file_errors_total: { type: "counter", labels: [] },
  agent_registry_trust_rejudged_total: { type: "counter", labels: [] },
  agent_registry_trust_jwks_fetch_errors_total: { type: "counter", labels: [] },
  agent_registry_watch_restarts_total: { type: "counter", labels: [] },
  agent_registry_build_info: { type: "gauge", labels: ["version", "nats_server_version"] },
} as const;

/** `name{labels} value` lines of the exposition text, keyed by the part before the value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe("createMetrics", () => {
  it("registers every documented metric with its type and labels on the given registry", async () => {
    const registry = new Registry();
    const m = createMetrics(registry);
    expect(m.registry).toBe(registry);
    const json = await registry.getMetricsAsJSON();
    const ours = new Map(json.filter((j) => j.name.startsWith("agent_registry_")).map((j) => [j.name, j]));
    expect([...ours.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [name, want] of Object.entries(EXPECTED)) {
      const metric = registry.getSingleMetric(name) as unknown as { labelNames: string[] } | undefined;
      expect(ours.get(name)?.type, name).toBe(want.type);
      expect(metric?.labelNames, name).toEqual(want.labels);
    }
  });

  it("never touches the global registry, so two instances coexist", async () => {
    const before = (await globalRegistry.getMetricsAsJSON()).length;
    const a = createMetrics();
    const b = createMetrics();
    a.evictions.inc();
    expect(a.registry).not.toBe(b.registry);
    expect(await b.registry.getSingleMetricAsString("agent_registry_evictions_total")).toContain("agent_registry_evictions_total 0");
    expect((await globalRegistry.getMetricsAsJSON()).length).toBe(before);
  });

  it("collects the default process metrics on the same registry", async () => {
    const m = createMetrics();
    const text = await m.registry.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_heap_size_total_bytes /m);
  });

  it("uses sub-millisecond request buckets from 0.1 ms to 1 s", async () => {
    expect(REQUEST_DURATION_BUCKETS[0]).toBe(0.0001);
    expect(REQUEST_DURATION_BUCKETS.at(-1)).toBe(1);
    const m = createMetrics();
    m.requestDuration.bind({ endpoint: "lookup", outcome: "ok" })(0.0003);
    const s = samples(await m.registry.metrics());
    expect(s.get('agent_registry_request_duration_seconds_bucket{le="0.0001",endpoint="lookup",outcome="ok"}')).toBe(0);
    expect(s.get('agent_registry_request_duration_seconds_bucket{le="0.0005",endpoint="lookup",outcome="ok"}')).toBe(1);
    expect(s.get('agent_registry_request_duration_seconds_bucket{le="+Inf",endpoint="lookup",outcome="ok"}')).toBe(1);
    expect(s.get('agent_registry_request_duration_seconds_count{endpoint="lookup",outcome="ok"}')).toBe(1);
  });

  it("counts each request the observer is told of in every series it feeds, as of each read", async () => {
    const m = createMetrics();
    const observe = requestObserver(m);
    observe("heartbeat", "ok", 0.0002);
    observe("heartbeat", "ok", 0.002);
    observe("heartbeat", "shed", 0.00001);
    observe("register", "unavailable", 0.3);
    observe("lookup", "ok", 0.0001);
    // A direct inc on the same series adds to what the observer counted.
    m.requests.inc({ endpoint: "lookup", outcome: "ok" }, 2);
    let s = samples(await m.registry.metrics());
    expect(s.get('agent_registry_requests_total{endpoint="heartbeat",outcome="ok"}')).toBe(2);
    expect(s.get('agent_registry_requests_total{endpoint="heartbeat",outcome="shed"}')).toBe(1);
    expect(s.get('agent_registry_requests_total{endpoint="lookup",outcome="ok"}')).toBe(3);
    expect(s.get('agent_registry_heartbeats_total{outcome="ok"}')).toBe(2);
    expect(s.get('agent_registry_heartbeats_total{outcome="shed"}')).toBe(1);
    expect(s.get('agent_registry_registrations_total{outcome="unavailable"}')).toBe(1);
    expect(s.get("agent_registry_store_failures_total")).toBe(1);
    expect(s.get('agent_registry_request_duration_seconds_count{endpoint="heartbeat",outcome="ok"}')).toBe(2);
    expect(s.get('agent_registry_request_duration_seconds_bucket{le="0.001",endpoint="heartbeat",outcome="ok"}')).toBe(1);
    // Counted once: a second read adds only what came since.
    observe("heartbeat", "ok", 0.0002);
    s = samples(await m.registry.metrics());
    expect(s.get('agent_registry_requests_total{endpoint="heartbeat",outcome="ok"}')).toBe(3);
    expect(s.get('agent_registry_heartbeats_total{outcome="ok"}')).toBe(3);
    // Read alone, as a scrape of one metric would, the counter is still current.
    observe("heartbeat", "ok", 0.0002);
    expect(await m.registry.getSingleMetricAsString("agent_registry_heartbeats_total")).toContain('agent_registry_heartbeats_total{outcome="ok"} 4');
  });

  it("adds counts kept elsewhere to their counter when it is read alone", async () => {
    const m = createMetrics();
    let dropped = 3;
    m.pendingCounts.push(() => {
      m.heartbeatEventsDropped.inc(dropped);
      dropped = 0;
    });
    expect(await m.registry.getSingleMetricAsString("agent_registry_heartbeat_events_dropped_total")).toContain("agent_registry_heartbeat_events_dropped_total 3");
    dropped = 2;
    expect(await m.registry.getSingleMetricAsString("agent_registry_heartbeat_events_dropped_total")).toContain("agent_registry_heartbeat_events_dropped_total 5");
  });

  it("exposes each deregistration reason at 0 before any event, and counts by label", async () => {
    const m = createMetrics();
    let s = samples(await m.registry.metrics());
    for (const reason of DEREGISTRATION_REASONS) expect(s.get(`agent_registry_deregistrations_total{reason="${reason}"}`)).toBe(0);
    m.deregistrations.inc({ reason: "evicted" });
    m.requests.inc({ endpoint: "register", outcome: "invalid_spec" });
    m.agents.set({ status: "ready" }, 3);
    m.natsConnected.set(1);
    s = samples(await m.registry.metrics());
    expect(s.get('agent_registry_deregistrations_total{reason="evicted"}')).toBe(1);
    expect(s.get('agent_registry_requests_total{endpoint="register",outcome="invalid_spec"}')).toBe(1);
    expect(s.get('agent_registry_agents{status="ready"}')).toBe(3);
    expect(s.get("agent_registry_nats_connected")).toBe(1);
    expect(s.get("agent_registry_evictor_leader")).toBe(0);
  });

  it("keeps a single build_info series", async () => {
    const m = createMetrics();
    setBuildInfo(m, "0.1.0", "2.9.10");
    setBuildInfo(m, "0.1.0", "2.11.4");
    const lines = [...samples(await m.registry.metrics()).entries()].filter(([k]) => k.startsWith("agent_registry_build_info"));
    expect(lines).toEqual([['agent_registry_build_info{version="0.1.0",nats_server_version="2.11.4"}', 1]]);
  });
});
