/**
 * Requests whose replies come back on one inbox subscription, for the load process's steady
 * streams: the fleet's heartbeats and the bare KV write baseline. nc.request() arms a timer
 * and races two promises per call; at 3,333 requests a second those objects are promoted, and
 * the load process's own major GCs held replies back by up to 41 ms, which the benchmark
 * counted as registry latency. The registry sends its writes the same way
 * (src/adapters/nats/acked-publisher.ts), and baseline and load use the same requester.
 */
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/nats-core";
import { PendingRing } from "../../../src/adapters/nats/pending-ring.js";

type Pending = { token: number; deadline: number; resolve: (m: Msg) => void; reject: (e: Error) => void };

export class InboxRequester {
  private readonly inbox = createInbox();
  private readonly pending = new PendingRing<Pending>(8192);
  private readonly sub: Subscription;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = 10_000,
  ) {
    const prefixLength = this.inbox.length + 1;
    this.sub = nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err) return;
        const p = this.pending.take(Number(msg.subject.slice(prefixLength)));
        if (!p) return;
        // 503 with no body: nothing listens on the subject.
        if (msg.data.length === 0 && msg.headers?.code === 503) p.reject(new Error("no responders"));
        else p.resolve(msg);
      },
    });
    this.sweeper = setInterval(() => {
      for (const p of this.pending.takeExpired(performance.now())) p.reject(new Error("timeout"));
    }, 250);
    this.sweeper.unref();
  }

  request(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<Msg> {
    const token = this.pending.nextToken();
    return new Promise<Msg>((resolve, reject) => {
      this.pending.put({ token, deadline: performance.now() + this.timeoutMs, resolve, reject });
      const reply = `${this.inbox}.${token}`;
      this.nc.publish(subject, data, headers ? { reply, headers } : { reply });
    });
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sub.unsubscribe();
    for (const p of this.pending.takeExpired(Infinity)) p.reject(new Error("closed"));
  }
}
