/**
 * Worker thread entry: reads the last value of every key of the bucket for a replica's start,
 * on a NATS connection of its own, and hands them to the main thread in packed batches
 * (entry-batch.ts). nats.js's work for each message (parsing it, its reply subject, its
 * headers) was half of a start against a million keys, on the thread that also applies every
 * entry to the view; here the two overlap (last-values-load.ts, docs/performance.md).
 *
 * The main thread grants a batch of credit for each one it takes, so at most `batchesAhead`
 * wait there; behind them nats.js buffers at most one pull (10,000 messages). After the last
 * key it goes on with the changes written since, until the main thread's watch resumed after
 * that key is up and it is told the revision from which that watch gives them: it passes on
 * every change up to that one, and none after.
 */
import { parentPort, workerData } from "node:worker_threads";
import { DeliverPolicy, jetstream, type ConsumerMessages } from "@nats-io/jetstream";
import { connect } from "../../client/connection.js";
import { EntryBatchWriter } from "./entry-batch.js";
import type { FromLoader, LastValuesJob, ToLoader } from "./last-values-load.js";

const job = workerData as LastValuesJob;
const port = parentPort!;
const say = (m: FromLoader, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);

let credits = job.batchesAhead;
/** The last revision to pass on, once the main thread's watch is up; the worker stops there. */
let through: number | null = null;
/** The revision of the last message read. */
let read = 0;
let wake: (() => void) | null = null;
let messages: ConsumerMessages | null = null;
port.on("message", (m: ToLoader) => {
  if (m.type === "credit") credits++;
  else {
    through = m.through;
    // Already there: ends the iteration below even while no message comes.
    if (read >= through) void messages?.close();
  }
  wake?.();
  wake = null;
});

async function readBucket(): Promise<void> {
  const nc = await connect(job.connection);
  try {
    const consumer = await jetstream(nc, { timeout: job.timeoutMs }).consumers.get(job.stream, { deliver_policy: DeliverPolicy.LastPerSubject });
    messages = await consumer.consume({ max_messages: 10_000 });
    const batch = new EntryBatchWriter(job.batchBytes);
    const prefix = job.subjectPrefix.length;
    const send = async (): Promise<void> => {
      // Once told where to stop, what was read is sent without waiting for credit: the main thread takes it all.
      while (credits === 0 && through === null) await new Promise<void>((resolve) => (wake = resolve));
      credits--;
      const buffer = batch.take();
      say({ type: "batch", buffer }, [buffer]);
    };
    let loaded = false;
    for await (const m of messages) {
      // The main thread's watch gives this change and every one after.
      if (through !== null && m.seq > through) break;
      read = m.seq;
      const op = m.headers?.get("KV-Operation");
      batch.add(m.subject.substring(prefix), m.seq, Math.floor(m.info.timestampNanos / 1e6), op === "DEL" || op === "PURGE" ? op : "PUT", m.data);
      // Nothing pending: every key's last value as of now is read. Later writes go on coming
      // here until the main thread's own watch gives them, so none falls between.
      const caughtUp = m.info.pending === 0;
      const last = through !== null && m.seq >= through;
      if (caughtUp || last || batch.size >= job.batchBytes) await send();
      if (caughtUp && !loaded) {
        loaded = true;
        say({ type: "done", revision: m.seq });
      }
      if (last) break;
    }
    if (batch.count > 0) await send();
    await messages.close();
  } finally {
    await nc.close();
  }
}

readBucket().then(
  () => say({ type: "closed" }),
  (e: unknown) => say({ type: "failed", message: e instanceof Error ? e.message : String(e) }),
);
