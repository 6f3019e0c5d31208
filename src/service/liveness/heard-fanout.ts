/**
 * Tells the other replicas which instances this one heard (docs/architecture.md, "Scale:
 * heartbeats held in memory", decision B). The replica that answers a heartbeat from memory
 * appends the instance to a batch, published every `periodMs` (20 ms) or as soon as it
 * reaches `maxBatchBytes` (64 KiB); every replica subscribes to all batches and skips its
 * own. Without it a follower would only learn of a heartbeat from the store, which the memory
 * path exists to keep quiet. A plain subscription to the heartbeat subjects would do the same
 * at a whole nats.js message per heartbeat per replica; a batch costs a peer a line split
 * and a callback per entry, and a lone replica receives nothing.
 *
 * Core NATS is at most once and so is this: a lost batch is counted (`onBatchesLost`), not
 * repaired. Correctness does not rest on it (suspect marks arbitrate evictions); the fan-out
 * only keeps followers from writing what the holder already knows.
 *
 * Wire format, UTF-8 text on `<subjectRoot>.<replica>`, lines separated by "\n":
 *
 *     v1 <seq>
 *     <agent_type>.<instance_id>
 *     <agent_type>.<instance_id> <active_tasks>
 *
 * `seq` counts the sender's batches from 1, the start probe included, so a peer can tell a
 * lost batch (a gap) from a restarted sender (a seq that goes back). Agent types and
 * instance ids are subject tokens (no dot, space or newline), so a line splits at its first
 * "." and its space without any escaping; `active_tasks` is a decimal integer and is absent
 * when the heartbeat did not carry it. A header-only batch is the start probe. A line that
 * does not parse is skipped; a batch whose header does not parse (another version) is
 * dropped whole.
 */
import type { Logger } from "../../kit/logger.js";

/**
 * The messaging the fan-out needs, so the service layer stays free of nats.js (main.ts wires
 * {@link natsHeardBus}; unit tests an in-memory bus).
 */
export type HeardBus = {
  publish(subject: string, data: Uint8Array): void;
  subscribe(subject: string, onMessage: (subject: string, data: Uint8Array) => void): { unsubscribe(): void };
  flush(): Promise<void>;
};

/**
 * The part of a nats.js `NatsConnection` the bus uses. A NatsConnection satisfies it as is;
 * it is spelled out here because src/service may not import `@nats-io/*` (eslint.config.js).
 */
export type HeardNatsConnection = {
  publish(subject: string, payload?: Uint8Array): void;
  subscribe(subject: string, opts: { callback: (err: Error | null, msg: { subject: string; data: Uint8Array }) => void }): { unsubscribe(): void };
  flush(): Promise<void>;
};

/**
 * A HeardBus over a nats.js connection. A callback subscription, not an async iterator: no
 * promise per message, and a throw cannot end the loop, because nothing escapes the callback
 * (an exception out of a nats.js callback is the process's uncaught exception).
 */
export function natsHeardBus(nc: HeardNatsConnection, log?: Logger): HeardBus {
  return {
    publish: (subject, data) => nc.publish(subject, data),
    subscribe: (subject, onMessage) =>
      nc.subscribe(subject, {
        callback: (err, msg) => {
          try {
            // A subscription refused by the server ends here; start() reports it as a timeout.
            if (err) log?.warn({ err, subject }, "heard fan-out subscription failed");
            else onMessage(msg.subject, msg.data);
          } catch (e) {
            log?.error({ err: e, subject }, "heard fan-out message handler failed");
          }
        },
      }),
    flush: () => nc.flush(),
  };
}

export type HeardFanoutDeps = {
  bus: HeardBus;
  /** e.g. "registry._replica.heard": batches go to `<subjectRoot>.<replica>`. */
  subjectRoot: string;
  /** This replica's name; characters outside [A-Za-z0-9_-] become "_" so it is one token. */
  replica: string;
  periodMs?: number;
  maxBatchBytes?: number;
  log: Logger;
  onHeard: (agentType: string, instanceId: string, activeTasks: number | undefined) => void;
  onBatchesLost?: (n: number) => void;
  onBatchSent?: (entries: number) => void;
};

const DEFAULT_PERIOD_MS = 20;
const DEFAULT_MAX_BATCH_BYTES = 64 * 1024;
/** Our batches stay near 64 KiB; anything this large is not one of ours. */
const MAX_RECEIVED_BYTES = 1024 * 1024;
/** "v1 " + a seq of up to 16 digits + "\n", kept free in every batch. */
const HEADER_RESERVE = 20;
/** Replicas are few; the bound only matters if something publishes under many names. */
const MAX_PEERS = 1024;
const WARN_EVERY_MS = 60_000;
// Subject tokens as the protocol defines them have neither; checked so that a bad caller
// cannot inject a line into a batch.
const ENTRY_TOKEN_RE = /^[^\s.]+$/;
const DIGITS_RE = /^[0-9]{1,9}$/;

type Probe = { seq: number; received: boolean; resolve: () => void };

export class HeardFanout {
  private readonly subject: string;
  private readonly pattern: string;
  private readonly replica: string;
  private readonly periodMs: number;
  private readonly maxBatchBytes: number;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private sub: { unsubscribe(): void } | null = null;
  private seq = 0;
  private connected = true;
  private stopped = false;
  private probe: Probe | null = null;
  private proven = false;
  /** Last seq seen from each peer. */
  private readonly peers = new Map<string, number>();
  private malformed = 0;
  private readonly lastWarned = new Map<string, number>();

  constructor(private readonly deps: HeardFanoutDeps) {
    this.replica = deps.replica.replace(/[^A-Za-z0-9_-]/g, "_") || "_";
    this.subject = `${deps.subjectRoot}.${this.replica}`;
    this.pattern = `${deps.subjectRoot}.*`;
    this.periodMs = Math.max(1, deps.periodMs ?? DEFAULT_PERIOD_MS);
    this.maxBatchBytes = Math.max(HEADER_RESERVE + 1, deps.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES);
  }

  /** The subject this replica publishes on. */
  get ownSubject(): string {
    return this.subject;
  }

  /** Received lines that did not parse, since the start (for tests and metrics). */
  get malformedLines(): number {
    return this.malformed;
  }

  /** Whether start() saw its own probe come back (and stop() was not called since). */
  get started(): boolean {
    return this.proven;
  }

  /** Entries waiting for the next batch. */
  get pendingEntries(): number {
    return this.pending.length;
  }

  /**
   * Subscribes and proves that this replica can both publish and receive on the fan-out: a
   * missing permission would otherwise go unnoticed while every follower turns each
   * heartbeat it did not hear about into a store write.
   */
  async start(timeoutMs = 5000): Promise<void> {
    this.stopped = false;
    let resolveProbe = (): void => {};
    const received = new Promise<void>((resolve) => (resolveProbe = resolve));
    const probe: Probe = { seq: 0, received: false, resolve: resolveProbe };
    let timeout: NodeJS.Timeout | null = null;
    try {
      try {
        this.sub ??= this.deps.bus.subscribe(this.pattern, (subject, data) => this.receive(subject, data));
      } catch (err) {
        throw this.unreachable("the subscription failed", err);
      }
      // The probe goes out now rather than behind a pending batch's timer.
      this.sendPending();
      // Known before the publish: a bus may deliver the probe while publish() runs.
      probe.seq = this.seq + 1;
      this.probe = probe;
      if (this.publish("") === 0) throw this.unreachable("the probe could not be published");
      const timedOut = new Promise<never>((_, reject) => {
        timeout = setTimeout(() => reject(this.unreachable(`its probe did not come back within ${timeoutMs} ms`)), timeoutMs);
        timeout.unref();
      });
      const flushed = this.deps.bus.flush().catch((err: unknown) => {
        throw this.unreachable("the flush failed", err);
      });
      await Promise.race([flushed.then(() => received), timedOut]);
      this.proven = !this.stopped;
    } catch (err) {
      this.sub?.unsubscribe();
      this.sub = null;
      throw err;
    } finally {
      if (timeout) clearTimeout(timeout);
      if (this.probe === probe) this.probe = null;
    }
  }

  /** Queues one heard instance for the next batch. */
  note(agentType: string, instanceId: string, activeTasks?: number): void {
    if (this.stopped || !this.connected) return;
    if (!ENTRY_TOKEN_RE.test(agentType) || !ENTRY_TOKEN_RE.test(instanceId)) {
      this.deps.log.debug({ agent_type: agentType, instance_id: instanceId }, "heard fan-out: entry is not two subject tokens; not sent");
      return;
    }
    const line =
      activeTasks !== undefined && Number.isSafeInteger(activeTasks) && activeTasks >= 0 && activeTasks < 1e9
        ? `${agentType}.${instanceId} ${activeTasks}`
        : `${agentType}.${instanceId}`;
    const bytes = Buffer.byteLength(line) + 1;
    if (this.pending.length > 0 && this.pendingBytes + bytes > this.maxBatchBytes - HEADER_RESERVE) this.sendPending();
    this.pending.push(line);
    this.pendingBytes += bytes;
    if (this.pendingBytes >= this.maxBatchBytes - HEADER_RESERVE) this.sendPending();
    else if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.sendPending();
      }, this.periodMs);
      this.timer.unref();
    }
  }

  /**
   * nats.js keeps what is published while disconnected and delivers it after the reconnect;
   * by then "heard" is stale and would postpone deadlines of instances that may have gone.
   */
  disconnected(): void {
    this.connected = false;
    this.dropPending();
  }

  reconnected(): void {
    this.connected = true;
  }

  stop(): void {
    this.stopped = true;
    this.proven = false;
    this.sub?.unsubscribe();
    this.sub = null;
    this.dropPending();
  }

  private dropPending(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private sendPending(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const entries = this.pending.length;
    const body = this.pending.join("\n");
    this.pending = [];
    this.pendingBytes = 0;
    if (this.publish(body) === 0) return;
    try {
      this.deps.onBatchSent?.(entries);
    } catch (err) {
      this.warnRarely("sent-hook", { err }, "heard fan-out: onBatchSent failed");
    }
  }

  /** Publishes one batch; its seq, or 0 when nothing went out (a closed connection). */
  private publish(body: string): number {
    const seq = this.seq + 1;
    const text = body === "" ? `v1 ${seq}` : `v1 ${seq}\n${body}`;
    try {
      this.deps.bus.publish(this.subject, this.encoder.encode(text));
    } catch (err) {
      // Not counted as sent, so peers see no gap for a batch that never left.
      this.warnRarely("publish", { err, subject: this.subject }, "heard fan-out: batch not published");
      return 0;
    }
    this.seq = seq;
    return seq;
  }

  private receive(subject: string, data: Uint8Array): void {
    if (this.stopped) return;
    const peer = subject.slice(subject.lastIndexOf(".") + 1);
    if (data.length > MAX_RECEIVED_BYTES) {
      this.warnRarely("oversized", { subject, bytes: data.length }, "heard fan-out: message too large; dropped");
      return;
    }
    const text = this.decoder.decode(data);
    const eol = text.indexOf("\n");
    const header = eol === -1 ? text : text.slice(0, eol);
    const seq = header.startsWith("v1 ") && /^[0-9]{1,15}$/.test(header.slice(3)) ? Number(header.slice(3)) : 0;
    if (seq < 1) {
      this.warnRarely("header", { subject, header: header.slice(0, 40) }, "heard fan-out: batch with an unknown header; dropped");
      return;
    }
    if (peer === this.replica) {
      const probe = this.probe;
      if (probe && !probe.received && seq === probe.seq) {
        probe.received = true;
        probe.resolve();
      }
      return;
    }
    this.track(peer, seq);
    if (eol !== -1) this.deliver(text, eol + 1, subject);
  }

  private track(peer: string, seq: number): void {
    const last = this.peers.get(peer);
    if (last === undefined && this.peers.size >= MAX_PEERS) {
      const oldest = this.peers.keys().next().value;
      if (oldest !== undefined) this.peers.delete(oldest);
    }
    this.peers.set(peer, seq);
    // A seq that goes back is a restarted peer: what it sent before is not missing.
    if (last === undefined || seq <= last + 1) return;
    try {
      this.deps.onBatchesLost?.(seq - last - 1);
    } catch (err) {
      this.warnRarely("lost-hook", { err }, "heard fan-out: onBatchesLost failed");
    }
  }

  /**
   * One pass over the batch: the next "." and " " are searched once and reused until passed,
   * so lines without them cannot make the pass quadratic.
   */
  private deliver(text: string, from: number, subject: string): void {
    const onHeard = this.deps.onHeard;
    let bad = 0;
    let failures = 0;
    let failed: unknown = undefined;
    let nextDot = -1;
    let nextSpace = -1;
    const n = text.length;
    const next = (ch: string, at: number): number => {
      const i = text.indexOf(ch, at);
      return i === -1 ? n : i;
    };
    for (let start = from; start < n; ) {
      let end = text.indexOf("\n", start);
      if (end === -1) end = n;
      const line = start;
      start = end + 1;
      if (end === line) continue;
      if (nextDot < line) nextDot = next(".", line);
      if (nextSpace < line) nextSpace = next(" ", line);
      const dot = nextDot;
      // An empty type or id, or a space before the dot.
      if (dot === line || dot >= end - 1 || nextSpace < dot) {
        bad++;
        continue;
      }
      const idEnd = nextSpace < end ? nextSpace : end;
      const instanceId = text.slice(dot + 1, idEnd);
      let activeTasks: number | undefined;
      if (idEnd < end) {
        const digits = text.slice(idEnd + 1, end);
        if (!DIGITS_RE.test(digits)) {
          bad++;
          continue;
        }
        activeTasks = Number(digits);
      }
      if (instanceId === "" || instanceId.includes(".")) {
        bad++;
        continue;
      }
      try {
        onHeard(text.slice(line, dot), instanceId, activeTasks);
      } catch (err) {
        if (failures++ === 0) failed = err;
      }
    }
    if (bad > 0) {
      this.malformed += bad;
      this.deps.log.debug({ subject, malformed_lines: bad }, "heard fan-out: malformed lines skipped");
    }
    if (failures > 0) this.deps.log.error({ err: failed, subject, failures }, "heard fan-out: onHeard failed for entries of a batch");
  }

  private unreachable(detail: string, cause?: unknown): Error {
    return new Error(
      `heard fan-out: could not publish or subscribe on ${this.subject} (${detail}); probably a missing NATS permission: ` +
        `the registry needs publish and subscribe on ${this.deps.subjectRoot}.>`,
      cause === undefined ? undefined : { cause },
    );
  }

  private warnRarely(kind: string, obj: object, msg: string): void {
    const now = Date.now();
    const last = this.lastWarned.get(kind);
    if (last !== undefined && now - last < WARN_EVERY_MS) return;
    this.lastWarned.set(kind, now);
    this.deps.log.warn(obj, msg);
  }
}
