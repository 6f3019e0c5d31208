/**
 * The load process's requests for its steady streams (the fleet's heartbeats, the bare KV
 * write baseline), through the registry's own ReplyInbox. With nc.request() at 3,333 a second,
 * the load process's own major GCs held replies back by up to 41 ms, which the benchmark
 * counted as registry latency; baseline and load now pay the same, smaller client cost.
 */
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { ReplyInbox } from "../../../src/adapters/nats/reply-inbox.js";

export function inboxRequester(nc: NatsConnection, timeoutMs = 10_000): ReplyInbox<Msg> {
  return new ReplyInbox<Msg>(nc, {
    timeoutMs,
    // 503 with no body: nothing listens on the subject.
    settle: (msg) => (msg.data.length === 0 && msg.headers?.code === 503 ? new Error("no responders") : msg),
    timedOut: () => new Error("timeout"),
  });
}
