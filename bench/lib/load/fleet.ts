/**
 * A simulated fleet of agent instances in the load process: registration through the API,
 * then heartbeats on a fixed schedule. Instance i owns the slot i/N of every interval, so
 * the heartbeat rate is flat at N/interval (the way a real fleet's start times spread),
 * and an instance registered after its slot in the first interval beats at the next one,
 * always within one interval of its registration: none is evicted while the fleet fills.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import type { NatsConnection } from "@nats-io/nats-core";
import { subjects } from "../../../src/protocol/subjects.js";
import { Recorder, round } from "../stats.js";
import { agentTypeName, specInput, type FleetShape } from "../specs.js";
import { roundSummary } from "./closed-loop.js";
import { enc, replyError, requestOk } from "./requests.js";
import { inboxRequester } from "./inbox-requester.js";

const TICK_MS = 5;
const HEARTBEAT_BODY = enc.encode(JSON.stringify({ status: "ready", active_tasks: 0 }));

export type FleetOptions = { shape: FleetShape; instancesPerType: number; intervalMs: number; prefix: string };

export class Fleet {
  readonly size: number;
  readonly keys: string[] = [];
  readonly index = new Map<string, number>();
  private readonly registerSubjects: string[] = [];
  private readonly heartbeatSubjects: string[] = [];
  private readonly registerBodies: Uint8Array[] = [];
  private readonly registered: Uint8Array;
  private readonly stopped: Uint8Array;
  private readonly specJson: string[];
  private timer: NodeJS.Timeout | null = null;
  private slot = 0;
  private startedAt = 0;
  private window: { recorder: Recorder; sent: number; errors: number; firstError?: string; startedAt: number; slowest: number[] } | null = null;
  private inFlight = 0;
  /** Heartbeats go out through one reply subscription (inbox-requester.ts), like the KV baseline. */
  private readonly requester: ReturnType<typeof inboxRequester>;
  /** The load process's own event-loop delay: a stall here would pass for a slow registry. */
  private loopDelay: IntervalHistogram | null = null;
  sent = 0;
  errors = 0;

  constructor(
    private readonly nc: NatsConnection,
    readonly opts: FleetOptions,
  ) {
    const { shape, instancesPerType } = opts;
    this.requester = inboxRequester(nc);
    this.size = shape.types * instancesPerType;
    this.registered = new Uint8Array(this.size);
    this.stopped = new Uint8Array(this.size);
    const subj = subjects(opts.prefix);
    this.specJson = Array.from({ length: shape.types }, (_, t) => JSON.stringify(specInput(t, shape)));
    // Type-minor order: the first `types` registrations create every agent type.
    for (let i = 0; i < this.size; i++) {
      const t = i % shape.types;
      const id = `i${i}`;
      const key = `${agentTypeName(t)}.${id}`;
      this.keys.push(key);
      this.index.set(key, i);
      this.registerSubjects.push(subj.register(agentTypeName(t)));
      this.heartbeatSubjects.push(subj.heartbeat(agentTypeName(t), id));
    }
  }

  /** A register body for instance `id` of type `t`. */
  registerBody(t: number, id: string, intervalMs = this.opts.intervalMs): Uint8Array {
    return enc.encode(`{"instance_id":"${id}","heartbeat_interval_ms":${intervalMs},"spec":${this.specJson[t]}}`);
  }

  /** Registers every instance, `concurrency` at a time, in index order. */
  async registerAll(concurrency: number): Promise<object> {
    const latency = new Recorder();
    let next = 0;
    let errors = 0;
    let firstError: string | undefined;
    const started = performance.now();
    const lane = async (): Promise<void> => {
      for (let i = next++; i < this.size; i = next++) {
        const t0 = performance.now();
        const error = await requestOk(this.nc, this.registerSubjects[i]!, this.registerBody(i % this.opts.shape.types, `i${i}`));
        latency.add(performance.now() - t0);
        if (error === null) this.registered[i] = 1;
        else {
          errors++;
          firstError ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    const seconds = (performance.now() - started) / 1000;
    return { count: this.size, errors, firstError, seconds: round(seconds), rate: round(this.size / seconds, 1), latencyMs: roundSummary(latency.summary()) };
  }

  /** Takes every instance as registered (the bucket was seeded with them directly). */
  assumeRegistered(): void {
    this.registered.fill(1);
  }

  /** Starts beating: every TICK_MS, the instances whose slots passed send one heartbeat. */
  startHeartbeats(): void {
    this.startedAt = performance.now();
    this.slot = 0;
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  stopHeartbeats(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  close(): void {
    this.stopHeartbeats();
    this.requester.close("closed");
  }

  beginWindow(): void {
    this.window = { recorder: new Recorder(), sent: 0, errors: 0, startedAt: performance.now(), slowest: [] };
    this.loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.loopDelay.enable();
  }

  endWindow(): object {
    const w = this.window;
    this.window = null;
    if (!w) throw new Error("no heartbeat window is open");
    const seconds = (performance.now() - w.startedAt) / 1000;
    return {
      sent: w.sent,
      answered: w.recorder.count,
      errors: w.errors,
      firstError: w.firstError,
      seconds: round(seconds),
      rate: round(w.sent / seconds, 1),
      latencyMs: roundSummary(w.recorder.summary()),
      inFlight: this.inFlight,
      slowestPerSecond: Array.from(w.slowest, (v) => v ?? 0),
      loadEventLoopDelayMs: this.loopDelayMs(),
    };
  }

  private loopDelayMs(): { p99: number; max: number } | null {
    const h = this.loopDelay;
    this.loopDelay = null;
    if (!h) return null;
    h.disable();
    return { p99: round(h.percentile(99) / 1e6), max: round(h.max / 1e6) };
  }

  /** Stops every `every`-th instance (they go silent, as a crashed agent does). */
  stopEvery(every: number): { stopped: number; at: number } {
    let n = 0;
    for (let i = 0; i < this.size; i += every) {
      this.stopped[i] = 1;
      n++;
    }
    return { stopped: n, at: Date.now() };
  }

  isStopped(i: number): boolean {
    return this.stopped[i] === 1;
  }

  private tick(): void {
    const due = Math.floor(((performance.now() - this.startedAt) / this.opts.intervalMs) * this.size);
    for (; this.slot < due; this.slot++) {
      const i = this.slot % this.size;
      if (this.registered[i] === 1 && this.stopped[i] === 0) this.beat(i);
    }
  }

  private beat(i: number): void {
    const w = this.window;
    const t0 = performance.now();
    this.sent++;
    this.inFlight++;
    if (w) w.sent++;
    this.requester.request(this.heartbeatSubjects[i]!, HEARTBEAT_BODY).then(
      (msg) => this.answered(w, t0, replyError(msg)),
      (e: unknown) => this.answered(w, t0, (e as Error).message),
    );
  }

  private answered(w: Fleet["window"], t0: number, error: string | null): void {
    this.inFlight--;
    // Only heartbeats sent inside the window count toward its latency.
    if (w && w === this.window) {
      const ms = performance.now() - t0;
      w.recorder.add(ms);
      // The slowest reply of each second shows whether slow replies are spikes or a level.
      const second = Math.floor((t0 - w.startedAt) / 1000);
      if (ms > (w.slowest[second] ?? 0)) w.slowest[second] = Math.round(ms);
    }
    if (error !== null) {
      this.errors++;
      if (w) {
        w.errors++;
        w.firstError ??= error;
      }
    }
  }
}
