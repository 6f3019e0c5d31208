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
  /**
   * Instance i is `i<i>` of agent type i % types: subjects are built when sent and an index
   * is parsed back from an id, so a fleet of 1,000,000 holds no string per instance (the
   * load process's own heap and GC would otherwise weigh on the figures).
   */
  private readonly subj: ReturnType<typeof subjects>;
  private readonly typeNames: string[];
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
    this.subj = subjects(opts.prefix);
    this.specJson = Array.from({ length: shape.types }, (_, t) => JSON.stringify(specInput(t, shape)));
    this.typeNames = Array.from({ length: shape.types }, (_, t) => agentTypeName(t));
  }

  /** The index of instance `instanceId` of `agentType`, or undefined when it is none of the fleet's. */
  indexOf(agentType: string, instanceId: string): number | undefined {
    if (!/^i\d+$/.test(instanceId)) return undefined;
    const i = Number(instanceId.slice(1));
    return i < this.size && this.typeNames[i % this.opts.shape.types] === agentType ? i : undefined;
  }

  private heartbeatSubject(i: number): string {
    return this.subj.heartbeat(this.typeNames[i % this.opts.shape.types]!, `i${i}`);
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
        const t = i % this.opts.shape.types;
        const error = await requestOk(this.nc, this.subj.register(this.typeNames[t]!), this.registerBody(t, `i${i}`));
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
    this.requester.request(this.heartbeatSubject(i), HEARTBEAT_BODY).then(
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
