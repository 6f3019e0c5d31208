/**
 * The KV adapter against a real nats-server: the same store contract as the in-memory double,
 * plus what only a real bucket has (settings of an existing bucket).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { KvStore, openBucket } from "../../src/adapters/nats/kv-store.js";
import { StoreConflictError, StoreFullError } from "../../src/domain/ports.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { storeContract, storeHistoryContract } from "../unit/store-contract.js";

let server: NatsTestServer;
let nc: NatsConnection;
let js: JetStreamClient;
let counter = 0;
const uniqueBucket = (what: string): string => `${what}-${process.pid}-${Date.now().toString(36)}-${counter++}`;

beforeAll(async () => {
  server = await withNatsServer();
  nc = await connect({ servers: server.url });
  js = jetstream(nc, { timeout: 5000 });
});

afterAll(async () => {
  await nc?.drain();
  await server?.stop();
});

async function freshStore(): Promise<KvStore> {
  const bucket = uniqueBucket("contract");
  const { kv } = await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
  return new KvStore(kv, { nc, bucket, timeoutMs: 5000 });
}

storeContract("KvStore", freshStore);
storeHistoryContract("KvStore", async () => {
  const bucket = uniqueBucket("history");
  const { kv, check } = await openBucket(js, { bucket, replicas: 1, history: 3, maxBytes: 0, timeoutMs: 5000 });
  return new KvStore(kv, { nc, bucket, timeoutMs: 5000, history: check.history });
});

describe("openBucket", () => {
  it("creates a missing bucket with direct gets off and reports no mismatch", async () => {
    const bucket = uniqueBucket("open");
    const first = await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    expect(first.check).toEqual({ created: true, mismatches: [], history: 1 });
    const info = await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`);
    expect(info.config.allow_direct).toBe(false);
    const again = await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    expect(again.check).toEqual({ created: false, mismatches: [], history: 1 });
  });

  it("reports settings of an existing bucket that differ from the configured ones", async () => {
    const bucket = uniqueBucket("mismatch");
    await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 });
    const reopened = await openBucket(js, { bucket, replicas: 3, history: 5, maxBytes: 4096, timeoutMs: 5000 });
    expect(reopened.check.created).toBe(false);
    expect(reopened.check.mismatches).toEqual(["replicas is 1, configured 3", "history is 1, configured 5", "max_bytes is unlimited, configured 4096"]);
  });

  it("refuses a write to a full bucket with StoreFullError, writing nothing", async () => {
    const bucket = uniqueBucket("full");
    const store = new KvStore((await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 4096, timeoutMs: 5000 })).kv, { nc, bucket, timeoutMs: 5000 });
    const big = new Uint8Array(1000).fill(65);
    let refused: unknown;
    const written: string[] = [];
    for (let i = 0; i < 20 && refused === undefined; i++) {
      try {
        await store.write(`agents.t${i}`, big, 0);
        written.push(`agents.t${i}`);
      } catch (e) {
        refused = e;
      }
    }
    expect(refused).toBeInstanceOf(StoreFullError);
    expect(written.length).toBeGreaterThan(0);
    expect(await store.get(`agents.t${written.length}`)).toBeNull();
  });

  it("gives a store on the existing bucket that sees the data already there", async () => {
    const bucket = uniqueBucket("reopen");
    const a = new KvStore((await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 })).kv, { nc, bucket, timeoutMs: 5000 });
    const rev = await a.write("agents.alpha", new TextEncoder().encode("x"), 0);
    const b = new KvStore((await openBucket(js, { bucket, replicas: 1, history: 1, maxBytes: 0, timeoutMs: 5000 })).kv, { nc, bucket, timeoutMs: 5000 });
    expect(await b.get("agents.alpha")).toMatchObject({ revision: rev, operation: "PUT" });
    await expect(b.write("agents.alpha", new TextEncoder().encode("y"), 0)).rejects.toBeInstanceOf(StoreConflictError);
  });
});
