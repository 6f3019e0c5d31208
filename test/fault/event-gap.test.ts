/**
 * Finding 15 of issue 14: the only replica dies between writes and their events. Writes are
 * made into the bucket while no replica runs (as the dead replica's own writes whose events it
 * never stored: status changes, a graceful leave, an eviction, a new instance); a replica that
 * starts then must store exactly one event per transition, in store order, with no gap.
 */
import { expect, it } from "vitest";
import { jetstream } from "@nats-io/jetstream";
import { canControlNatsServers, withNatsServer } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec } from "../harness/registry.js";
import { spawnRegistry } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";
import { KvStore, openBucket } from "../../src/adapters/nats/kv-store.js";
import { decodeInstanceRecord, encodeRecord, instanceKey, LEASE_KEY, type InstanceRecord } from "../../src/domain/model/records.js";

it.runIf(canControlNatsServers())("a replica started after the only one died stores the events it never stored", async () => {
  await using server = await withNatsServer();
  const env = {
    NATS_URL: server.url,
    REGISTRY_PREFIX: "eg.registry",
    REGISTRY_BUCKET: "eg-registry",
    REGISTRY_EVENTS_STREAM: "EG_EVENTS",
    REGISTRY_HISTORY: "8",
    REGISTRY_LEASE_MS: "1000",
    LOG_LEVEL: "info",
  };
  const c = await RawClient.connect(server.url, "eg.registry");
  const first = await spawnRegistry("eg-a", env);
  try {
    for (let i = 0; i < 5; i++) {
      const r = await c.request("register.gap", { spec: spec("gap"), instance_id: `g${i}`, heartbeat_interval_ms: 3_600_000 }, 3000);
      expect(r.ok).toBe(true);
    }
    await waitFor(async () => (await readStoredEvents(c.nc, "EG_EVENTS")).filter((e) => e.event.type === "registry.agent.registered").length === 5, {
      timeoutMs: 10_000,
      message: "registrations stored",
    });
    await first.kill();

    // The dead replica's writes whose events were never stored.
    const bucket = await openBucket(jetstream(c.nc), { bucket: "eg-registry", replicas: 1, history: 8, maxBytes: 0, timeoutMs: 5000 });
    const store = new KvStore(bucket.kv, { nc: c.nc, bucket: "eg-registry", timeoutMs: 5000, history: bucket.check.history });
    const rewrite = async (id: string, change: (r: InstanceRecord) => InstanceRecord) => {
      const cur = (await store.get(instanceKey("gap", id)))!;
      return store.write(instanceKey("gap", id), encodeRecord(change(decodeInstanceRecord(cur.value)!)), cur.revision);
    };
    const gone = (reason: "graceful" | "evicted") => (r: InstanceRecord): InstanceRecord => ({ kind: "gone", version: r.version, reason, at: Date.now(), registered_at: r.registered_at, last_heartbeat: r.last_heartbeat });
    const live = (r: InstanceRecord) => r as Extract<InstanceRecord, { kind: "instance" }>;
    await rewrite("g0", (r) => ({ ...live(r), last_heartbeat: Date.now() })); // a heartbeat: no event
    await rewrite("g0", (r) => ({ ...live(r), status: "draining" }));
    await rewrite("g1", (r) => ({ ...live(r), status: "draining" }));
    await rewrite("g1", gone("graceful"));
    await rewrite("g2", gone("evicted"));
    await rewrite("g3", (r) => ({ ...live(r), status: "draining" }));
    await rewrite("g3", (r) => ({ ...live(r), status: "ready" }));
    const g5 = await store.write(instanceKey("gap", "g5"), encodeRecord({ ...live(decodeInstanceRecord((await store.get(instanceKey("gap", "g4")))!.value)!), last_heartbeat: Date.now() }), 0);

    const second = await spawnRegistry("eg-b", env);
    try {
      await waitFor(async () => (await readStoredEvents(c.nc, "EG_EVENTS")).some((e) => e.event.data.revision === g5), { timeoutMs: 15_000, message: "the recovered events stored" });
      const events = await readStoredEvents(c.nc, "EG_EVENTS");
      const ids = events.map((e) => e.event.id);
      expect(new Set(ids).size).toBe(ids.length);
      const positions = events.map((e) => [e.event.data.revision, Number(String(e.event.id).split("-")[1])] as const);
      expect([...positions].sort((a, b) => a[0] - b[0] || a[1] - b[1])).toEqual(positions);
      const after = events.filter((e) => e.event.type !== "registry.capability.changed").slice(5).map((e) => [e.event.type.replace("registry.agent.", ""), e.event.data.instance_id, e.event.data.to ?? e.event.data.reason ?? ""]);
      expect(after).toEqual([
        ["status_changed", "g0", "draining"],
        ["status_changed", "g1", "draining"],
        ["deregistered", "g1", "graceful"],
        ["deregistered", "g2", "evicted"],
        ["status_changed", "g3", "draining"],
        ["status_changed", "g3", "ready"],
        ["registered", "g5", ""],
      ]);
      expect(second.logs.some((l) => l.includes("derived the events of writes after the last stored event"))).toBe(true);
    } finally {
      await second.stop();
    }
  } finally {
    await c.close();
    await first.stop().catch(() => undefined);
  }
});

it.runIf(canControlNatsServers())("after many heartbeats since the last event, a kill -9 leaves nothing counted unrecoverable, and a transition after the watermark is recovered", async () => {
  await using server = await withNatsServer();
  const env = {
    NATS_URL: server.url,
    REGISTRY_PREFIX: "eq.registry",
    REGISTRY_BUCKET: "eq-registry",
    REGISTRY_EVENTS_STREAM: "EQ_EVENTS",
    REGISTRY_HISTORY: "4",
    REGISTRY_LEASE_MS: "1000",
    LOG_LEVEL: "info",
  };
  const FLEET = 30;
  const c = await RawClient.connect(server.url, "eq.registry");
  const first = await spawnRegistry("eq-a", env);
  try {
    for (let i = 0; i < FLEET; i++) {
      const r = await c.request("register.quiet", { spec: spec("quiet"), instance_id: `q${i}`, heartbeat_interval_ms: 3_600_000 }, 3000);
      expect(r.ok).toBe(true);
    }
    await waitFor(async () => (await readStoredEvents(c.nc, "EQ_EVENTS")).filter((e) => e.event.type === "registry.agent.registered").length === FLEET, {
      timeoutMs: 10_000,
      message: "registrations stored",
    });
    // A quiet fleet: every instance heartbeats more often than the bucket keeps values per key.
    for (let round = 0; round < 6; round++) for (let i = 0; i < FLEET; i++) expect((await c.request(`heartbeat.quiet.q${i}`, {}, 3000)).ok).toBe(true);
    const bucket = await openBucket(jetstream(c.nc), { bucket: "eq-registry", replicas: 1, history: 4, maxBytes: 0, timeoutMs: 5000 });
    const store = new KvStore(bucket.kv, { nc: c.nc, bucket: "eq-registry", timeoutMs: 5000, history: bucket.check.history });
    const beaten = await store.lastRevision();
    await waitFor(async () => {
      const lease = await store.get(LEASE_KEY);
      const mark = lease ? (JSON.parse(new TextDecoder().decode(lease.value)) as { published_through?: number }).published_through : undefined;
      return mark !== undefined && mark >= beaten;
    }, { timeoutMs: 5000, message: "a lease renewal with the watermark past the heartbeats" });
    await first.kill();

    // The dead replica's last write, whose event it never stored.
    const cur = (await store.get(instanceKey("quiet", "q0")))!;
    const rec = decodeInstanceRecord(cur.value) as Extract<InstanceRecord, { kind: "instance" }>;
    const drained = await store.write(instanceKey("quiet", "q0"), encodeRecord({ ...rec, status: "draining" }), cur.revision);

    const second = await spawnRegistry("eq-b", env);
    try {
      await waitFor(async () => (await readStoredEvents(c.nc, "EQ_EVENTS")).some((e) => e.event.data.revision === drained), { timeoutMs: 15_000, message: "the recovered event stored" });
      const events = await readStoredEvents(c.nc, "EQ_EVENTS");
      const ids = events.map((e) => e.event.id);
      expect(new Set(ids).size).toBe(ids.length);
      const recovered = events.filter((e) => e.event.data.revision === drained);
      expect(recovered.map((e) => [e.event.type, e.event.data.instance_id, e.event.data.to])).toEqual([["registry.agent.status_changed", "q0", "draining"]]);
      expect(second.logs.some((l) => l.includes("derived the events of writes after the last stored event"))).toBe(true);
      expect(second.logs.filter((l) => l.includes("cannot be derived") || l.includes("too many writes"))).toEqual([]);
    } finally {
      await second.stop();
    }
  } finally {
    await c.close();
    await first.stop().catch(() => undefined);
  }
});
