/**
 * The store's write path against a real nats-server: acks, refusals and timeouts arrive as
 * the same outcomes the KV client gave (the store contract in kv-store.test.ts covers the
 * compare-and-set itself).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { AckedPublisher, PublishRefusedError, PublishTimeoutError } from "../../src/adapters/nats/acked-publisher.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";

let server: NatsTestServer;
let nc: NatsConnection;
const enc = new TextEncoder();

beforeAll(async () => {
  server = await withNatsServer();
  nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "ACKS", subjects: ["acks.>"], max_msgs_per_subject: 1 });
});

afterAll(async () => {
  await nc?.drain();
  await server?.stop();
});

describe("AckedPublisher", () => {
  it("resolves with the stored sequence, in order, for many writes in flight", async () => {
    const p = new AckedPublisher(nc, 5000);
    const acks = await Promise.all(Array.from({ length: 200 }, (_, i) => p.publish(`acks.many.${i}`, enc.encode(String(i)))));
    const seqs = acks.map((a) => a.seq);
    expect(new Set(seqs).size).toBe(200);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(p.inFlight).toBe(0);
    p.close();
  });

  it("keeps every write apart when more are in flight than its ring first holds", async () => {
    const p = new AckedPublisher(nc, 10_000);
    const acks = await Promise.all(Array.from({ length: 3000 }, (_, i) => p.publish(`acks.burst.${i % 50}`, enc.encode(String(i)))));
    expect(new Set(acks.map((a) => a.seq)).size).toBe(3000);
    expect(p.inFlight).toBe(0);
    p.close();
  });

  it("refuses a write whose expected last sequence is stale with JetStream's err_code 10071", async () => {
    const p = new AckedPublisher(nc, 5000);
    const { seq: first } = await p.publish("acks.cas", enc.encode("a"));
    const h = (rev: number) => {
      const x = headers();
      x.set("Nats-Expected-Last-Subject-Sequence", String(rev));
      return x;
    };
    const { seq: second } = await p.publish("acks.cas", enc.encode("b"), h(first));
    expect(second).toBeGreaterThan(first);
    const refused = await p.publish("acks.cas", enc.encode("c"), h(first)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PublishRefusedError);
    expect((refused as PublishRefusedError).code).toBe(10071);
    p.close();
  });

  it("reports a second publish with the same Nats-Msg-Id as a duplicate of the stored one", async () => {
    const p = new AckedPublisher(nc, 5000);
    const id = headers();
    id.set("Nats-Msg-Id", "event-1");
    const stored = await p.publish("acks.dup", enc.encode("x"), id);
    const again = await p.publish("acks.dup", enc.encode("x"), id);
    expect(stored.duplicate).toBe(false);
    expect(again).toEqual({ seq: stored.seq, duplicate: true });
    p.close();
  });

  it("refuses at once with 503 when no stream stores the subject", async () => {
    const p = new AckedPublisher(nc, 5000);
    const started = performance.now();
    const refused = await p.publish("nobody.stores.this", enc.encode("x")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PublishRefusedError);
    expect((refused as PublishRefusedError).code).toBe(503);
    expect(performance.now() - started).toBeLessThan(4000);
    p.close();
  });

  it("times out when something listens but never acks, and forgets the write", async () => {
    const silent = nc.subscribe("silent.subject");
    const p = new AckedPublisher(nc, 200);
    const refused = await p.publish("silent.subject", enc.encode("x")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PublishTimeoutError);
    expect(p.inFlight).toBe(0);
    silent.unsubscribe();
    p.close();
  });

  it("refuses the writes still waiting when closed", async () => {
    const silent = nc.subscribe("silent.close");
    const p = new AckedPublisher(nc, 60_000);
    const waiting = p.publish("silent.close", enc.encode("x")).catch((e: unknown) => e);
    p.close();
    expect(await waiting).toBeInstanceOf(Error);
    silent.unsubscribe();
  });
});
