/**
 * Copies REGISTRY_EVENTS into PostgreSQL, exactly once and in stream order.
 *
 * The database's stored position is the only bookmark. The mirror reads the stream with an
 * ordered consumer (ephemeral, no server-side state) starting at position + 1, writes each
 * batch and the new position in one transaction, and on any failure throws the consumer away
 * and starts again from the position it reads back. Nothing is acked, so there is no second
 * bookmark on the NATS side that could disagree with the database (a durable consumer's ack
 * floor can run ahead of a commit that failed, or behind one that succeeded).
 *
 * One writer at a time: the writer holds a session advisory lock on its own connection and
 * writes through that connection only (audit-store.ts); others stand by and retry the lock.
 */
import { jetstream, jetstreamManager, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { EventType, toCloudEvent, type AuditGapData } from "../protocol/events.js";
import { subjects as subjectsOf } from "../protocol/subjects.js";
import type { Logger } from "../kit/logger.js";
import { AuditWriter, type Gap } from "./audit-store.js";
import { BatchQueue } from "./batch-queue.js";
import { toRow, type EventRow, type TenantBook } from "./event-rows.js";
import type { AuditMetrics } from "./metrics.js";
import { migrate } from "./migrations.js";

export type MirrorState = "starting" | "standby" | "writing" | "stopped";

export type MirrorDeps = {
  nc: NatsConnection;
  databaseUrl: string;
  stream: string;
  prefix: string;
  batchSize: number;
  retentionDays: number;
  standbyRetryMs: number;
  maxRetryMs: number;
  log: Logger;
  metrics: AuditMetrics;
  timeoutMs?: number;
};

const PRUNE_EVERY_MS = 3600_000;
const decoder = new TextDecoder();

export class Mirror {
  #state: MirrorState = "starting";
  #mirroredSeq = 0;
  #streamLastSeq = 0;
  readonly #abort = new AbortController();
  #stopMessages: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #lastPrune = 0;
  #databaseUp = false;

  constructor(private readonly deps: MirrorDeps) {}

  get state(): MirrorState {
    return this.#state;
  }
  get mirroredSeq(): number {
    return this.#mirroredSeq;
  }
  get streamLastSeq(): number {
    return this.#streamLastSeq;
  }
  /** Whether the last attempt to use PostgreSQL succeeded. */
  get databaseUp(): boolean {
    return this.#databaseUp;
  }

  #setDatabaseUp(up: boolean): void {
    this.#databaseUp = up;
    this.deps.metrics.databaseUp.set(up ? 1 : 0);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#stopMessages?.();
    await this.#loop;
    this.#state = "stopped";
  }

  /** Connect, take the lock (or stand by), copy; on any failure back off and start over. */
  async #run(): Promise<void> {
    const { log } = this.deps;
    let failures = 0;
    while (!this.#abort.signal.aborted) {
      let writer: AuditWriter | undefined;
      try {
        writer = await AuditWriter.connect(this.deps.databaseUrl);
        this.#setDatabaseUp(true);
        const applied = await migrate(writer.connection);
        if (applied.length > 0) log.info({ versions: applied }, "applied audit schema migrations");
        while (!(await writer.tryLock(this.deps.stream))) {
          if (this.#state !== "standby") log.info({ stream: this.deps.stream }, "another mirror is writing; standing by");
          this.#state = "standby";
          this.deps.metrics.writer.set(0);
          await sleep(this.deps.standbyRetryMs, this.#abort.signal);
          if (this.#abort.signal.aborted) return;
          if (writer.dead) throw writer.dead;
        }
        this.#state = "writing";
        this.deps.metrics.writer.set(1);
        failures = 0;
        await this.#copy(writer);
        // The copy ended without a failure (a reconnect): start over, but never in a tight loop.
        await sleep(100, this.#abort.signal);
      } catch (err) {
        if (this.#abort.signal.aborted) break;
        failures++;
        const waitMs = Math.min(this.deps.maxRetryMs, 250 * 2 ** Math.min(failures, 16));
        if (writer === undefined || writer.dead) this.#setDatabaseUp(false);
        log.warn({ err, retry_in_ms: waitMs, attempt: failures, state: this.#state }, "audit mirror interrupted; starting over from the stored position");
        await sleep(waitMs, this.#abort.signal);
      } finally {
        this.deps.metrics.writer.set(0);
        if (this.#state === "writing") this.#state = "starting";
        await writer?.close();
      }
    }
  }

  /** Copies from the stored position until stopped or until something fails (then throws). */
  async #copy(writer: AuditWriter): Promise<void> {
    const { stream, log, batchSize } = this.deps;
    const timeout = this.deps.timeoutMs ?? 5000;
    const jsm = await jetstreamManager(this.deps.nc, { timeout });
    let position = await writer.position(stream);
    const book = await writer.tenantBook();
    this.#setMirrored(position);
    const info = await jsm.streams.info(stream);
    this.#setStreamLast(info.state.last_seq);
    if (info.state.last_seq < position) {
      throw new Error(`stream ${stream} ends at ${info.state.last_seq}, before the stored position ${position}: was it deleted and created again? This database mirrors the old stream; point the mirror at a new database`);
    }
    log.info({ stream, position, first_seq: info.state.first_seq, last_seq: info.state.last_seq }, "mirroring from the stored position");
    if (info.state.first_seq > position + 1) {
      // Everything up to first_seq - 1 left the stream before it was mirrored.
      const gap = { firstSeq: position + 1, lastSeq: info.state.first_seq - 1 };
      await writer.commit(stream, position, gap.lastSeq, [], [gap]);
      position = gap.lastSeq;
      this.#setMirrored(position);
      await this.#reportGaps([gap]);
    }
    await this.#maybePrune(writer);

    const js = jetstream(this.deps.nc, { timeout });
    const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: position + 1 });
    const messages = await consumer.consume({ max_messages: Math.max(100, batchSize * 2) });
    this.#stopMessages = () => messages.stop();
    // The lock went with the connection: stop at once rather than finish the batch on another.
    const unwatch = writer.onDeath(() => messages.stop());
    // After a reconnect the consumer may be gone with the server's state; it would notice only
    // after missed heartbeats (tens of seconds). Starting over from the stored position is immediate.
    const status = this.deps.nc.status();
    void (async () => {
      for await (const st of status) {
        if (st.type !== "reconnect") continue;
        log.info({ position }, "reconnected to NATS; starting over from the stored position");
        messages.stop();
        break;
      }
    })().catch(() => undefined);
    if (this.#abort.signal.aborted) messages.stop();
    const queue = new BatchQueue<JsMsg>(batchSize * 2);
    const reader = (async () => {
      try {
        for await (const m of messages) {
          this.#setStreamLast(m.seq + m.info.pending);
          await queue.push(m);
        }
        queue.end();
      } catch (err) {
        queue.end(err);
      }
    })();
    try {
      // Whatever arrived while the previous batch was committing is the next batch.
      for (let batch = await queue.take(batchSize); batch.length > 0; batch = await queue.take(batchSize)) {
        position = await this.#flush(writer, position, batch, book);
        await this.#maybePrune(writer);
      }
      if (writer.dead) throw writer.dead;
    } finally {
      unwatch();
      (status as { stop?: () => void }).stop?.();
      this.#stopMessages = undefined;
      messages.stop();
      queue.end();
      await reader;
      await consumer.delete().catch(() => undefined);
    }
  }

  /** One transaction: rows, gaps between them, position. Returns the new position. */
  async #flush(writer: AuditWriter, from: number, batch: readonly JsMsg[], book: TenantBook): Promise<number> {
    const { stream, metrics } = this.deps;
    const gaps: Gap[] = [];
    const rows: EventRow[] = [];
    let expected = from + 1;
    for (const m of batch) {
      if (m.seq > expected) gaps.push({ firstSeq: expected, lastSeq: m.seq - 1 });
      rows.push(toRow(m.seq, decoder.decode(m.data), book));
      expected = m.seq + 1;
    }
    const to = batch[batch.length - 1]!.seq;
    const started = performance.now();
    const inserted = await writer.commit(stream, from, to, rows, gaps);
    metrics.batchSeconds.observe((performance.now() - started) / 1000);
    metrics.lagSeconds.observe(Math.max(0, Date.now() - Number(batch[0]!.timestampNanos / 1_000_000n)) / 1000);
    metrics.rows.inc(inserted);
    if (inserted < rows.length) {
      metrics.duplicateIds.inc(rows.length - inserted);
      this.deps.log.warn({ skipped: rows.length - inserted, through_seq: to }, "skipped stream messages whose event id is already stored");
    }
    const stripped = rows.filter((r) => r.nulStripped).map((r) => r.seq);
    if (stripped.length > 0) this.deps.log.warn({ seqs: stripped }, "stored events without the U+0000 characters they carried (JSONB cannot hold them)");
    this.#setMirrored(to);
    if (gaps.length > 0) await this.#reportGaps(gaps);
    return to;
  }

  /** Metric, log line, and a stored alert event (deduplicated by its id if published twice). */
  async #reportGaps(gaps: readonly Gap[]): Promise<void> {
    const { stream, log, metrics } = this.deps;
    const js = jetstream(this.deps.nc, { timeout: this.deps.timeoutMs ?? 5000 });
    const subject = subjectsOf(this.deps.prefix).alert(EventType.AuditGapAlert);
    for (const g of gaps) {
      const missing = g.lastSeq - g.firstSeq + 1;
      metrics.gaps.inc();
      metrics.gapEvents.inc(missing);
      log.error({ stream, first_seq: g.firstSeq, last_seq: g.lastSeq, missing }, "events left the stream before they were mirrored: the audit history has a gap");
      const data: AuditGapData = { stream, first_seq: g.firstSeq, last_seq: g.lastSeq, missing };
      const id = `audit_gap-${stream}-${g.firstSeq}-${g.lastSeq}`;
      try {
        await js.publish(subject, JSON.stringify(toCloudEvent(EventType.AuditGapAlert, id, "audit_gap", data, Date.now())), { msgID: id });
      } catch (err) {
        // The gap is in audit_gaps, the metric and the log already; the alert is the courtesy copy.
        log.warn({ err, first_seq: g.firstSeq, last_seq: g.lastSeq }, "could not publish the audit gap alert");
      }
    }
  }

  async #maybePrune(writer: AuditWriter): Promise<void> {
    const days = this.deps.retentionDays;
    if (days <= 0 || Date.now() - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = Date.now();
    const deleted = await writer.prune(days);
    if (deleted > 0) this.deps.log.info({ deleted, retention_days: days }, "deleted mirrored events past their retention");
  }

  #setMirrored(seq: number): void {
    this.#mirroredSeq = seq;
    this.deps.metrics.mirroredSeq.set(seq);
    this.deps.metrics.lagEvents.set(Math.max(0, this.#streamLastSeq - seq));
  }

  #setStreamLast(seq: number): void {
    this.#streamLastSeq = Math.max(this.#streamLastSeq, seq);
    this.deps.metrics.streamLastSeq.set(this.#streamLastSeq);
    this.deps.metrics.lagEvents.set(Math.max(0, this.#streamLastSeq - this.#mirroredSeq));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
