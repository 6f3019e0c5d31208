/**
 * JetStream publishes whose acks come back through one subscription, for the store's updates
 * (every heartbeat is one). nats.js's request(), under kv.update(), arms a timer and races two
 * promises per call; at 3,300 writes a second those objects outlived two scavenges and were
 * promoted, 5 MB/s of old-generation garbage whose marking stalled the event loop for 40-80 ms
 * every few seconds (docs/performance.md). Here a write costs one map entry and one promise,
 * and one timer expires whatever is overdue.
 *
 * The wire is JetStream's own: a publish with a reply subject, answered by a PubAck
 * (`{"stream","seq"}`) or an API error (`{"error":{"code","err_code","description"}}`), or by
 * the server's 503 status when nothing stores the subject. The subscription lives as long as
 * the connection; nats.js renews it after a reconnect.
 */
import { createInbox, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/nats-core";

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

type Pending = { resolve: (seq: number) => void; reject: (e: Error) => void; deadline: number; subject: string };

const decoder = new TextDecoder();

export class AckedPublisher {
  private readonly inbox: string;
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private sub: Subscription | null = null;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
    inboxPrefix?: string,
  ) {
    this.inbox = createInbox(inboxPrefix);
  }

  /** Resolves with the stored message's sequence; rejects with PublishRefusedError, PublishTimeoutError or the client's error. */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<number> {
    this.listen();
    const token = (this.next++).toString(36);
    return new Promise<number>((resolve, reject) => {
      this.pending.set(token, { resolve, reject, deadline: performance.now() + this.timeoutMs, subject });
      try {
        this.nc.publish(subject, data, headers ? { reply: `${this.inbox}.${token}`, headers } : { reply: `${this.inbox}.${token}` });
      } catch (e) {
        this.pending.delete(token);
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
    for (const [token, p] of this.pending) {
      this.pending.delete(token);
      p.reject(new Error("the publisher was closed before the ack came"));
    }
  }

  private listen(): void {
    if (this.sub) return;
    const prefixLength = this.inbox.length + 1;
    this.sub = this.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const token = msg.subject.slice(prefixLength);
        const p = this.pending.get(token);
        if (!p) return; // expired already
        this.pending.delete(token);
        settle(p, msg.data, msg.headers);
      },
    });
    // Expiry is checked a few times per timeout rather than with a timer per write.
    this.sweeper = setInterval(() => this.expire(), Math.max(10, Math.min(250, this.timeoutMs / 4)));
    this.sweeper.unref();
  }

  private expire(): void {
    const now = performance.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) continue;
      this.pending.delete(token);
      p.reject(new PublishTimeoutError(p.subject, this.timeoutMs));
    }
  }
}

function settle(p: Pending, data: Uint8Array, headers: MsgHdrs | undefined): void {
  if (data.length === 0 && headers?.hasError) {
    // 503: no stream listens on the subject (JetStream down or the bucket gone).
    p.reject(new PublishRefusedError(headers.code, `publish to ${p.subject} refused: ${headers.code} ${headers.description}`.trim()));
    return;
  }
  let ack: { seq?: unknown; error?: { code?: unknown; err_code?: unknown; description?: unknown } };
  try {
    ack = JSON.parse(decoder.decode(data)) as typeof ack;
  } catch {
    p.reject(new Error(`publish to ${p.subject}: the ack is not JSON`));
    return;
  }
  if (ack.error) {
    const code = typeof ack.error.err_code === "number" ? ack.error.err_code : Number(ack.error.code) || 0;
    p.reject(new PublishRefusedError(code, `publish to ${p.subject} refused: ${String(ack.error.description ?? "unknown error")}`));
  } else if (typeof ack.seq === "number") p.resolve(ack.seq);
  else p.reject(new Error(`publish to ${p.subject}: the ack has no sequence`));
}
