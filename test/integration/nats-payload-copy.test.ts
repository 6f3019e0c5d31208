/**
 * What the cached lookup replies rely on in the pinned NATS client (serialized-reply.ts): a
 * payload handed to publish or respond is kept only until the client's next flush, which
 * copies it into the client's own outgoing buffer before anything reaches the socket. A reply
 * rewritten before that flush goes out rewritten; one rewritten after it goes out as it was.
 * If an upgrade of @nats-io/nats-core wrote payloads from the caller's memory, a rewrite could
 * race the socket, and this test fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";

let server: NatsTestServer;
let sender: NatsConnection;
let receiver: NatsConnection;
const dec = new TextDecoder();

beforeAll(async () => {
  server = await withNatsServer();
  sender = await connect({ servers: server.url });
  receiver = await connect({ servers: server.url });
});

afterAll(async () => {
  await sender?.drain();
  await receiver?.drain();
  await server?.stop();
});

/**
 * Publishes `count` payloads of about `bytes` each, rewriting the revision of each before or
 * after the client flushed it; returns what arrived.
 */
async function sendAndRewrite(count: number, bytes: number, when: "before flush" | "after flush"): Promise<string[]> {
  const subject = `copy.${when.replace(" ", "-")}`;
  const sub = receiver.subscribe(subject, { max: count });
  await receiver.flush();
  const got: string[] = [];
  const done = (async () => {
    for await (const m of sub) got.push(dec.decode(m.data));
  })();
  for (let i = 0; i < count; i++) {
    const payload = Buffer.from(`{"n":${i},"pad":"${"x".repeat(bytes)}","revision":11}`);
    sender.publish(subject, payload);
    if (when === "after flush") await new Promise<void>((resolve) => setImmediate(resolve));
    payload.write("22", payload.length - 3, "latin1");
  }
  await sender.flush();
  await done;
  return got;
}

describe("the pinned NATS client's handling of a published payload", () => {
  it("sends a reply-sized payload rewritten before its flush as rewritten", async () => {
    // Past the client's pending limit it flushes inline, at publish, so only payloads the size
    // of a lookup reply (2.7 KB) are still queued here.
    const got = await sendAndRewrite(5, 2_700, "before flush");
    expect(got).toHaveLength(5);
    for (const text of got) expect(JSON.parse(text).revision).toBe(22);
  });

  it("sends a payload rewritten after its flush as it was, however much is queued for the socket", async () => {
    // 12 MB: more than the socket takes at once, so some of it waits in Node's stream.
    const got = await sendAndRewrite(200, 60_000, "after flush");
    expect(got).toHaveLength(200);
    for (const text of got) expect(JSON.parse(text).revision).toBe(11);
  });
});
