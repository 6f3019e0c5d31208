/**
 * JetStream publishes whose acks come back through one subscription, for the store's updates
 * (every heartbeat is one) and the events stream (a burst of registrations is as many events). nats.js's request(), under kv.update(), arms a timer and races two
 * promises per call; at 3,300 writes a second those objects outlived two scavenges and were
 * promoted, 5 MB/s of old-generation garbage whose marking stalled the event loop for 40-80 ms
 * every few seconds (docs/performance.md). Here a write costs one slot of a PendingRing and
 * one promise, and one timer expires whatever is overdue.
 *
 * The wire is JetStream's own: a publish with a reply subject, answered by a PubAck
 * (`{"stream","seq"}`) or an API error (`{"error":{"code","err_code","description"}}`), or by
 * the server's 503 status when nothing stores the subject. The subscription lives as long as
 * the connection; nats.js renews it after a reconnect.
 */
import { createInbox, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/nats-core";
import { PendingRing } from "./pending-ring.js";

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

type Pending = { token: number; resolve: (ack: PubAck) => void; reject: (e: Error) => void; deadline: number; subject: string };

const decoder = new TextDecoder();

export class AckedPublisher {
  private readonly inbox: string;
  private readonly pending = new PendingRing<Pending>();
  private sub: Subscription | null = null;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
    inboxPrefix?: string,
  ) {
    this.inbox = createInbox(inboxPrefix);
  }

  /** Resolves with the stream's ack; rejects with PublishRefusedError, PublishTimeoutError or the client's error. */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<PubAck> {
    this.listen();
    const token = this.pending.nextToken();
    return new Promise<PubAck>((resolve, reject) => {
      this.pending.put({ token, resolve, reject, deadline: performance.now() + this.timeoutMs, subject });
      try {
        const reply = `${this.inbox}.${token}`;
        this.nc.publish(subject, data, headers ? { reply, headers } : { reply });
      } catch (e) {
        this.pending.take(token);
        reject(e as Error);
      }
    });
  }

  /** Writes still waiting for their ack. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Stops listening; writes still waiting are refused. */
  close(): void {
    this.sub?.unsubscribe();
    this.sub = null;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const p of this.pending.takeExpired(Infinity)) p.reject(new Error("the publisher was closed before the ack came"));
  }

  private listen(): void {
    if (this.sub) return;
    const prefixLength = this.inbox.length + 1;
    this.sub = this.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const p = this.pending.take(Number(msg.subject.slice(prefixLength)));
        if (p) settle(p, msg.data, msg.headers); // else: expired already
      },
    });
    // Expiry is checked a few times per timeout rather than with a timer per write.
    this.sweeper = setInterval(() => {
      for (const p of this.pending.takeExpired(performance.now())) p.reject(new PublishTimeoutError(p.subject, this.timeoutMs));
    }, Math.max(10, Math.min(250, this.timeoutMs / 4)));
    this.sweeper.unref();
  }
}

function settle(p: Pending, data: Uint8Array, headers: MsgHdrs | undefined): void {
  if (data.length === 0 && headers?.hasError) {
    // 503: no stream listens on the subject (JetStream down or the bucket gone).
    p.reject(new PublishRefusedError(headers.code, `publish to ${p.subject} refused: ${headers.code} ${headers.description}`.trim()));
    return;
  }
  let ack: { seq?: unknown; duplicate?: unknown; error?: { code?: unknown; err_code?: unknown; description?: unknown } };
  try {
    ack = JSON.parse(decoder.decode(data)) as typeof ack;
  } catch {
    p.reject(new Error(`publish to ${p.subject}: the ack is not JSON`));
    return;
  }
  if (ack.error) {
    const code = typeof ack.error.err_code === "number" ? ack.error.err_code : Number(ack.error.code) || 0;
    p.reject(new PublishRefusedError(code, `publish to ${p.subject} refused: ${String(ack.error.description ?? "unknown error")}`));
  } else if (typeof ack.seq === "number") p.resolve({ seq: ack.seq, duplicate: ack.duplicate === true });
  else p.reject(new Error(`publish to ${p.subject}: the ack has no sequence`));
}
