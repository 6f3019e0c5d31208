/**
 * The floor under a heartbeat: bare JetStream KV writes at the heartbeat rate, from the load
 * process, each timed from request to ack (sent as the publishes a KV put is). A heartbeat is one such write plus the registry's
 * own work (decode, validate, compare-and-set, reply), so this is its baseline.
 */
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { openBucket } from "../../../src/adapters/nats/kv-store.js";
import { Recorder, round } from "../stats.js";
import { roundSummary } from "./closed-loop.js";
import { inboxRequester } from "./inbox-requester.js";

const decoder = new TextDecoder();
/** A PubAck names the stored sequence; an error reply does not. */
const isAck = (msg: Msg): boolean => /"seq":\d+/.test(decoder.decode(msg.data));

const TICK_MS = 5;

export async function kvWriteBaseline(nc: NatsConnection, opts: { bucket: string; keys: number; ratePerSec: number; durationMs: number }): Promise<object> {
  await openBucket(jetstream(nc, { timeout: 10_000 }), { bucket: opts.bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 10_000 });
  // A KV put is a JetStream publish to $KV.<bucket>.<key>; sent through the same requester as
  // the heartbeats, so baseline and load pay the same client costs.
  const requester = inboxRequester(nc);
  const value = new TextEncoder().encode(JSON.stringify({ kind: "instance", version: "1.0.0", status: "ready", registered_at: Date.now(), last_heartbeat: Date.now(), heartbeat_interval_ms: 30000, active_tasks: 0, metadata: {}, spec_changed: false }));
  const latency = new Recorder();
  let errors = 0;
  let sent = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - started;
      const due = Math.floor((Math.min(elapsed, opts.durationMs) / 1000) * opts.ratePerSec);
      for (; sent < due; sent++) {
        const t0 = performance.now();
        requester.request(`$KV.${opts.bucket}.instances.baseline.k${sent % opts.keys}`, value).then(
          (msg) => (isAck(msg) ? latency.add(performance.now() - t0) : errors++),
          () => errors++,
        );
      }
      if (elapsed >= opts.durationMs) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
  await new Promise((r) => setTimeout(r, 1000));
  requester.close("closed");
  return { sent, errors, rate: round(sent / (opts.durationMs / 1000), 1), latencyMs: roundSummary(latency.summary()) };
}
