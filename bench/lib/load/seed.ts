/**
 * Fills the registry's bucket directly with agent and instance records, in the format the
 * registry writes (src/domain/records.ts), to measure what a replica pays to start against a
 * large bucket without first paying for 100,000 registrations through the API.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { openBucket } from "../../../src/adapters/nats/kv-store.js";
import { agentKey, encodeRecord, instanceKey } from "../../../src/domain/model/records.js";
import { agentTypeName, storedSpec, type FleetShape } from "../specs.js";
import { round } from "../stats.js";

const IN_FLIGHT = 512;

export async function seedBucket(nc: NatsConnection, bucket: string, shape: FleetShape, instancesPerType: number, intervalMs: number): Promise<object> {
  const { kv } = await openBucket(jetstream(nc, { timeout: 30_000 }), { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 30_000 });
  const started = performance.now();
  const now = Date.now();
  const instances = shape.types * instancesPerType;
  // One instance record serves every instance: they differ only in their key.
  const instance = encodeRecord({
    kind: "instance",
    version: "1.0.0",
    status: "ready",
    registered_at: now,
    last_heartbeat: now,
    heartbeat_interval_ms: intervalMs,
    active_tasks: 0,
    metadata: {},
    spec_changed: false,
  });
  // Write w is made when a lane takes it: a million closures up front would cost the load process ~100 MB.
  const write = (w: number): Promise<unknown> => {
    if (w < shape.types) {
      const spec = storedSpec(w, shape);
      return kv.put(agentKey(spec.agent_type), encodeRecord({ kind: "agent", spec, registered_at: now, updated_at: now }));
    }
    const i = w - shape.types;
    return kv.put(instanceKey(agentTypeName(i % shape.types), `i${i}`), instance);
  };
  const total = shape.types + instances;
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let w = next++; w < total; w = next++) await write(w);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const seconds = (performance.now() - started) / 1000;
  return { agents: shape.types, instances, seconds: round(seconds), rate: round(total / seconds, 1) };
}
