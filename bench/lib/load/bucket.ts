/**
 * The bucket seen from outside the registry: how many writes its stream took (the store's
 * write rate under a heartbeat load), and how long a bare reader takes to read the last value
 * of every key (the floor under a replica's cold start: no decoding, no view).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { round } from "../stats.js";

const streamOf = (bucket: string): string => `KV_${bucket}`;

/**
 * The last sequence of the bucket's stream (every put and delete moves it by one), or null
 * when the server does not answer in 30 s: a server saturated by writes is a finding to
 * report, not a reason to lose the run's other figures.
 */
export async function bucketSequence(nc: NatsConnection, bucket: string): Promise<number | null> {
  try {
    const jsm = await jetstreamManager(nc, { timeout: 30_000 });
    return (await jsm.streams.info(streamOf(bucket))).state.last_seq;
  } catch {
    return null;
  }
}

/**
 * Reads the last value of every key with one ordered consumer, as a replica's start does,
 * touching nothing but the message count. Resolves when the consumer reports nothing pending.
 */
export async function readBucketBare(nc: NatsConnection, bucket: string): Promise<{ messages: number; seconds: number; rate: number }> {
  const started = performance.now();
  const consumer = await jetstream(nc, { timeout: 30_000 }).consumers.get(streamOf(bucket), { deliver_policy: DeliverPolicy.LastPerSubject });
  const messages = await consumer.consume({ max_messages: 10_000 });
  let count = 0;
  for await (const m of messages) {
    count++;
    if (m.info.pending === 0) break;
  }
  await messages.close();
  const seconds = (performance.now() - started) / 1000;
  return { messages: count, seconds: round(seconds), rate: round(count / seconds, 1) };
}
