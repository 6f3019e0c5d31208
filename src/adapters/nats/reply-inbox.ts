/**
 * Requests whose replies come back on one inbox subscription (`<inbox>.<token>`), each
 * waiting in a PendingRing, with one sweep timer for timeouts. nats.js request() arms a
 * timer and races two promises per call instead, and at thousands of requests a second
 * those objects were promoted to the old generation (docs/performance.md). Used by the
 * registry's store and event writes (AckedPublisher) and by the benchmark's load process.
 * The subscription lives as long as the connection; nats.js renews it after a reconnect.
 */
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/nats-core";
import { PendingRing } from "./pending-ring.js";

type Pending<T> = { token: number; deadline: number; subject: string; resolve: (value: T) => void; reject: (e: Error) => void };

export type ReplyInboxOptions<T> = {
  timeoutMs: number;
  /** Turns a reply into the request's result, or into the Error it is rejected with. */
  settle: (msg: Msg, subject: string) => T | Error;
  /** The Error a request without a reply in time is rejected with. */
  timedOut: (subject: string) => Error;
  inboxPrefix?: string;
};

export class ReplyInbox<T> {
  private readonly inbox: string;
  private readonly pending = new PendingRing<Pending<T>>();
  private sub: Subscription | null = null;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: ReplyInboxOptions<T>,
  ) {
    this.inbox = createInbox(opts.inboxPrefix);
  }

  request(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<T> {
    this.listen();
    const token = this.pending.nextToken();
    return new Promise<T>((resolve, reject) => {
      this.pending.put({ token, deadline: performance.now() + this.opts.timeoutMs, subject, resolve, reject });
      try {
        const reply = `${this.inbox}.${token}`;
        this.nc.publish(subject, data, headers ? { reply, headers } : { reply });
      } catch (e) {
        this.pending.take(token);
        reject(e as Error);
      }
    });
  }

  /** Requests still waiting for their reply. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Stops listening; requests still waiting are rejected with `reason`. */
  close(reason: string): void {
    this.sub?.unsubscribe();
    this.sub = null;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const p of this.pending.takeExpired(Infinity)) p.reject(new Error(reason));
  }

  private listen(): void {
    if (this.sub) return;
    const prefixLength = this.inbox.length + 1;
    this.sub = this.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const p = this.pending.take(Number(msg.subject.slice(prefixLength)));
        if (!p) return; // expired already
        const result = this.opts.settle(msg, p.subject);
        if (result instanceof Error) p.reject(result);
        else p.resolve(result);
      },
    });
    // Expiry is checked a few times per timeout rather than with a timer per request.
    this.sweeper = setInterval(() => {
      for (const p of this.pending.takeExpired(performance.now())) p.reject(this.opts.timedOut(p.subject));
    }, Math.max(10, Math.min(250, this.opts.timeoutMs / 4)));
    this.sweeper.unref();
  }
}
