/**
 * JetStream publishes whose acks come back through one subscription, for the store's updates
 * (every heartbeat is one) and the events stream (a burst of registrations is as many events). nats.js's request(), under kv.update(), arms a timer and races two
 * promises per call; at 3,300 writes a second those objects outlived two scavenges and were
 * promoted, 5 MB/s of old-generation garbage whose marking stalled the event loop for 40-80 ms
 * every few seconds (docs/performance.md). Here a write goes through a ReplyInbox: one ring
 * slot and one promise, and one timer expires whatever is overdue.
 *
 * The wire is JetStream's own: a publish with a reply subject, answered by a PubAck
 * (`{"stream","seq"}`) or an API error (`{"error":{"code","err_code","description"}}`), or by
 * the server's 503 status when nothing stores the subject.
 */
import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import { ReplyInbox } from "./reply-inbox.js";

/** The stream refused the publish; `code` is JetStream's err_code (10071: wrong last sequence). */
export class PublishRefusedError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "PublishRefusedError";
  }
}

/** No ack within the timeout: the publish may or may not have been stored. */
export class PublishTimeoutError extends Error {
  constructor(subject: string, timeoutMs: number) {
    super(`no ack for a publish to ${subject} within ${timeoutMs} ms`);
    this.name = "PublishTimeoutError";
  }
}

/** What the stream answered: the message's sequence, and whether it was a duplicate (Nats-Msg-Id seen) it did not store again. */
export type PubAck = { seq: number; duplicate: boolean };

const decoder = new TextDecoder();

export class AckedPublisher {
  private readonly inbox: ReplyInbox<PubAck>;

  constructor(nc: NatsConnection, timeoutMs: number, inboxPrefix?: string) {
    this.inbox = new ReplyInbox<PubAck>(nc, {
      timeoutMs,
      settle: toAck,
      timedOut: (subject) => new PublishTimeoutError(subject, timeoutMs),
      ...(inboxPrefix === undefined ? {} : { inboxPrefix }),
    });
  }

  /** Resolves with the stream's ack; rejects with PublishRefusedError, PublishTimeoutError or the client's error. */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<PubAck> {
    return this.inbox.request(subject, data, headers);
  }

  /** Writes still waiting for their ack. */
  get inFlight(): number {
    return this.inbox.inFlight;
  }

  /** Stops listening; writes still waiting are refused. */
  close(): void {
    this.inbox.close("the publisher was closed before the ack came");
  }
}

/** A PubAck, or the Error its reply means. */
function toAck(msg: Msg, subject: string): PubAck | Error {
  const { data, headers } = msg;
  if (data.length === 0 && headers?.hasError) {
    // 503: no stream listens on the subject (JetStream down or the bucket gone).
    return new PublishRefusedError(headers.code, `publish to ${subject} refused: ${headers.code} ${headers.description}`.trim());
  }
  let ack: { seq?: unknown; duplicate?: unknown; error?: { code?: unknown; err_code?: unknown; description?: unknown } };
  try {
    ack = JSON.parse(decoder.decode(data)) as typeof ack;
  } catch {
    return new Error(`publish to ${subject}: the ack is not JSON`);
  }
  if (ack.error) {
    const code = typeof ack.error.err_code === "number" ? ack.error.err_code : Number(ack.error.code) || 0;
    return new PublishRefusedError(code, `publish to ${subject} refused: ${String(ack.error.description ?? "unknown error")}`);
  }
  if (typeof ack.seq === "number") return { seq: ack.seq, duplicate: ack.duplicate === true };
  return new Error(`publish to ${subject}: the ack has no sequence`);
}
