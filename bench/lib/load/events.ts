/**
 * Reads registry events back from the REGISTRY_EVENTS stream, through JetStream consumers:
 * a message a consumer delivers is one the stream stored, which is what the targets are
 * about (a core-NATS subscriber would see an event before, or without, it being stored).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { agentTypeName } from "../specs.js";
import { Recorder, round } from "../stats.js";
import { roundSummary } from "./closed-loop.js";
import type { Fleet } from "./fleet.js";
import { requestOk } from "./requests.js";

type CloudEvent = { id: string; type: string; time: string; data: Record<string, unknown> };

/**
 * Registers probe instances at a steady rate and times each from sending its register
 * request to receiving its stored `registry.agent.registered` event. Probes ask for the
 * longest heartbeat interval, so they stay live without beating and are never evicted.
 */
export class EventProbe {
  private readonly sentAt = new Map<string, number>();
  private readonly latency = new Recorder();
  private timer: NodeJS.Timeout | null = null;
  private stopConsumer: (() => void) | null = null;
  private n = 0;
  private errors = 0;
  private firstError: string | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly fleet: Fleet,
  ) {}

  async start(stream: string, ratePerSec: number, probeIntervalMs: number): Promise<void> {
    const { prefix, shape } = this.fleet.opts;
    const consumer = await jetstream(this.nc).consumers.get(stream, {
      filter_subjects: `${prefix}.agent.registered.>`,
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    this.stopConsumer = () => void messages.close();
    void (async () => {
      for await (const m of messages) {
        const id = (m.json<CloudEvent>().data["instance_id"] as string | undefined) ?? "";
        const t0 = this.sentAt.get(id);
        if (t0 === undefined) continue;
        this.sentAt.delete(id);
        this.latency.add(performance.now() - t0);
      }
    })();
    this.timer = setInterval(() => {
      const n = this.n++;
      const t = n % shape.types;
      const id = `probe${n}`;
      this.sentAt.set(id, performance.now());
      void requestOk(this.nc, `${prefix}.register.${agentTypeName(t)}`, this.fleet.registerBody(t, id, probeIntervalMs)).then((error) => {
        if (error === null) return;
        this.errors++;
        this.firstError ??= error;
        this.sentAt.delete(id);
      });
    }, 1000 / ratePerSec);
  }

  /** Stops probing, waits a little for the last events, and summarizes. */
  async end(graceMs: number): Promise<object> {
    if (this.timer) clearInterval(this.timer);
    const deadline = performance.now() + graceMs;
    while (this.sentAt.size > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    this.stopConsumer?.();
    return { sent: this.n, received: this.latency.count, missing: this.sentAt.size, errors: this.errors, firstError: this.firstError, latencyMs: roundSummary(this.latency.summary()) };
  }
}

export type Deregistered = { agentType: string; instanceId: string; reason: string; lastHeartbeat: number; time: number };

/** Every stored `registry.agent.deregistered` event, oldest first. */
export async function readDeregistered(nc: NatsConnection, stream: string, prefix: string): Promise<Deregistered[]> {
  // A filtered consumer on a stream of a million events takes the server a while to set up.
  const consumer = await jetstream(nc, { timeout: 60_000 }).consumers.get(stream, { filter_subjects: `${prefix}.agent.deregistered.>`, deliver_policy: DeliverPolicy.All });
  const out: Deregistered[] = [];
  if ((await consumer.info()).num_pending === 0) return out;
  const messages = await consumer.consume();
  for await (const m of messages) {
    const e = m.json<CloudEvent>();
    out.push({
      agentType: String(e.data["agent_type"]),
      instanceId: String(e.data["instance_id"]),
      reason: String(e.data["reason"]),
      lastHeartbeat: Date.parse(String(e.data["last_heartbeat"])),
      time: Date.parse(e.time),
    });
    if (m.info.pending === 0) break;
  }
  await messages.close();
  return out;
}

/**
 * What the evictor did to the fleet: every stopped instance must have been evicted, none
 * of the others; lateness is each eviction's stored time past last heartbeat + missed x interval.
 */
export function evictionReport(events: Deregistered[], fleet: Fleet, missed: number): object {
  const lateness = new Recorder();
  let evictedStopped = 0;
  const falseEvictions: string[] = [];
  for (const e of events) {
    if (e.reason !== "evicted") continue;
    const i = fleet.indexOf(e.agentType, e.instanceId);
    if (i === undefined || !fleet.isStopped(i)) {
      falseEvictions.push(`${e.agentType}.${e.instanceId}`);
      continue;
    }
    evictedStopped++;
    lateness.add(e.time - (e.lastHeartbeat + missed * fleet.opts.intervalMs));
  }
  const s = lateness.summary();
  return {
    deregisteredEvents: events.length,
    evictedStopped,
    falseEvictions: falseEvictions.length,
    falseEvictionSample: falseEvictions.slice(0, 5),
    latenessMs: { ...roundSummary(s), min: round(minOf(events, fleet, missed)) },
  };
}

function minOf(events: Deregistered[], fleet: Fleet, missed: number): number {
  let min = Infinity;
  for (const e of events) if (e.reason === "evicted") min = Math.min(min, e.time - (e.lastHeartbeat + missed * fleet.opts.intervalMs));
  return Number.isFinite(min) ? min : 0;
}
