/**
 * Finding 15 of issue 14: the only replica dies after writes whose events it never stored. A
 * replica that starts later must derive exactly the events a live replica derived for the
 * writes after the last stored event, from the values the bucket keeps per key.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import type { StoreEvent } from "../../../../src/domain/view/events.js";
import type { StoreHistory } from "../../../../src/domain/ports.js";
import { agentKey, encodeRecord, instanceKey, LEASE_KEY, type LiveInstanceRecord } from "../../../../src/domain/model/records.js";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { silentLogger } from "../../../../src/kit/logger.js";
import { ViewFeed } from "../../../../src/service/view/view-feed.js";
import { bucketTenantTrust, encodeBucketTrust, trustRootsKey } from "../../../../src/domain/trust/bucket-trust.js";
import { generateKeyPairSync } from "node:crypto";
import { readPublishedThrough } from "../../../../src/service/liveness/evictor-lease.js";

const jwk = { ...generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }), kid: "k1", alg: "EdDSA" };
const feeds: ViewFeed[] = [];
afterEach(async () => {
  for (const f of feeds.splice(0)) await f.stop();
});

const live = (status: LiveInstanceRecord["status"], last_heartbeat = 0): LiveInstanceRecord => ({
  kind: "instance", version: "1.0.0", status, registered_at: 0, last_heartbeat,
  heartbeat_interval_ms: 1000, active_tasks: 0, metadata: {}, spec_changed: false,
});
const spec = (type: string, capability: string) =>
  agentSpecSchema.parse({
    agent_type: type, version: "1.0.0", description: "", owner_team: "t",
    capabilities: [{ name: capability, description: "", input_schema: {}, output_schema: {} }],
    nats_subject: `tasks.${type}`, consumer_group: type,
  });

/** A script of registry writes with the compare-and-set revisions kept per key. */
class Writer {
  private readonly revs = new Map<string, number>();
  constructor(readonly store: MemoryStore) {}
  async put(key: string, record: Parameters<typeof encodeRecord>[0]): Promise<number> {
    const rev = await this.store.write(key, encodeRecord(record), this.revs.get(key) ?? 0);
    this.revs.set(key, rev);
    return rev;
  }
  agent = (type: string, capability: string) => this.put(agentKey(type), { kind: "agent", spec: spec(type, capability), registered_at: 0, updated_at: 0 });
  instance = (type: string, id: string, status: LiveInstanceRecord["status"], hb = 0) => this.put(instanceKey(type, id), live(status, hb));
  gone = (type: string, id: string, reason: "graceful" | "evicted") =>
    this.put(instanceKey(type, id), { kind: "gone", version: "1.0.0", reason, at: 5, registered_at: 0, last_heartbeat: 0 });
  async remove(key: string): Promise<void> {
    await this.store.remove(key, this.revs.get(key)!);
  }
}

/** A feed over `store` collecting its events; `lastStored` is what the event stream would say. */
async function startFeed(store: MemoryStore, lastStored: number | null, unrecoverable: number[] = [], history: StoreHistory = store, watermark = true) {
  const events: StoreEvent[] = [];
  const view = new RegistryView();
  const feed = new ViewFeed({
    store, view, log: silentLogger, onReserved: () => undefined,
    onEvents: (evs) => events.push(...evs),
    history,
    lastStoredRevision: async () => lastStored,
    publishedThrough: watermark ? () => readPublishedThrough(store) : undefined,
    onUnrecoverable: (n) => unrecoverable.push(n),
  });
  feeds.push(feed);
  await feed.start();
  await feed.whenLoaded();
  return { events, view, feed };
}

const summary = (evs: StoreEvent[]) => evs.map((e) => ({ id: `${e.revision}-${e.index}`, type: e.type, data: e.data }));

describe("Event recovery after the only replica died", () => {
  it("derives exactly the events a live replica derived after the last stored one, in store order", async () => {
    const store = new MemoryStore(4);
    const w = new Writer(store);
    // The live replica that will "die": it sees every write and derives every event.
    const witness = await startFeed(store, null);
    await w.agent("alpha", "cap.a");
    await w.instance("alpha", "a1", "ready");
    await w.instance("alpha", "a2", "registered");
    await w.agent("beta", "cap.b");
    const lastStored = await w.instance("beta", "b1", "ready");
    await w.put(LEASE_KEY, { kind: "agent", spec: spec("lease", "x"), registered_at: 0, updated_at: 0 } as never);
    // After the last stored event: a heartbeat, status changes, a deregistration, an eviction,
    // a new instance, a new agent type sharing a capability, and a key deleted outright.
    await w.instance("alpha", "a1", "ready", 10);
    await w.instance("alpha", "a2", "ready");
    await w.instance("alpha", "a1", "draining");
    await w.gone("alpha", "a1", "graceful");
    await w.gone("beta", "b1", "evicted");
    await w.instance("alpha", "a3", "ready");
    await w.agent("gamma", "cap.a");
    await w.instance("gamma", "g1", "ready");
    await w.remove(instanceKey("alpha", "a2"));
    const last = await store.lastRevision();
    await expect.poll(() => witness.view.revision).toBe(last);
    const expected = summary(witness.events.filter((e) => e.revision >= lastStored));
    expect(expected.map((e) => e.type)).toEqual([
      "registry.agent.registered", "registry.capability.changed",
      "registry.agent.status_changed",
      "registry.agent.status_changed",
      "registry.agent.deregistered",
      "registry.agent.deregistered", "registry.capability.changed",
      "registry.agent.registered",
      "registry.agent.registered", "registry.capability.changed",
      "registry.agent.deregistered",
    ]);

    const unrecoverable: number[] = [];
    const recovered = await startFeed(store, lastStored, unrecoverable);
    expect(summary(recovered.events)).toEqual(expected);
    expect(unrecoverable).toEqual([]);
    // The view ends where a plain load would.
    expect(recovered.view.revision).toBe(last);
    expect([...recovered.view.get("alpha")!.instances.keys()]).toEqual(["a3"]);
  });

  it("derives a tenant's trust roots events (v1.2) too: a set, and a delete of roots set before the last stored event", async () => {
    const store = new MemoryStore(4);
    const w = new Writer(store);
    const witness = await startFeed(store, null);
    const trust = (tenant: string, mode: "off" | "require", by: string) =>
      encodeBucketTrust({ kind: "trust_roots", tenant, by, at: 0, trust: bucketTenantTrust.parse({ mode, ...(mode === "require" ? { jwks: { keys: [jwk] }, signers: [{ kid: "k1", publisher: "p", agent_types: ["*"] }] } : {}) }) });
    const setRev = await store.write(trustRootsKey("globex"), trust("globex", "require", "alice"), 0);
    const lastStored = await w.agent("alpha", "cap.a");
    await store.write(trustRootsKey("initech"), trust("initech", "off", "bob"), 0);
    await store.remove(trustRootsKey("globex"), setRev);
    const last = await store.lastRevision();
    await expect.poll(() => witness.view.revision).toBe(last);
    const expected = summary(witness.events.filter((e) => e.revision >= lastStored));
    expect(expected.map((e) => e.type)).toEqual(["registry.trust.roots_changed", "registry.trust.roots_changed"]);
    expect(expected.at(-1)!.data).toMatchObject({ tenant: "globex", change: "deleted" });
    const recovered = await startFeed(store, lastStored);
    expect(summary(recovered.events)).toEqual(expected);
    expect([...recovered.view.trustRoots.all().keys()]).toEqual(["initech"]);
  });

  it("counts a key whose earlier value is no longer kept and derives nothing wrong for it", async () => {
    const store = new MemoryStore(3);
    const w = new Writer(store);
    await w.agent("alpha", "cap.a");
    await w.instance("alpha", "a1", "ready");
    const lastStored = await w.instance("alpha", "a2", "ready");
    // a1 goes draining, then heartbeats push its pre-crash value out of the history.
    await w.instance("alpha", "a1", "draining");
    await w.instance("alpha", "a1", "draining", 1);
    await w.instance("alpha", "a1", "draining", 2);
    await w.gone("alpha", "a2", "graceful");
    const unrecoverable: number[] = [];
    const recovered = await startFeed(store, lastStored, unrecoverable);
    expect(unrecoverable).toEqual([1]);
    // After the last stored event, a2's deregistration is derived (and alpha's capability goes,
    // a1 being draining); a1 is neither "registered" again nor given a status change. a1's
    // change to draining is lost, and events up to its oldest kept value are derived against
    // that value rather than the true one: that is what the count reports.
    const after = recovered.events.filter((e) => e.revision > lastStored);
    expect(after.map((e) => e.type)).toEqual(["registry.agent.deregistered", "registry.capability.changed"]);
    expect(after[0]!.data).toMatchObject({ instance_id: "a2", agent_removed: false });
    expect(after[1]!.data).toMatchObject({ capability: "cap.a", change: "removed" });
  });

  it("recovers nothing with a history of one value per key, as before", async () => {
    const store = new MemoryStore(1);
    const w = new Writer(store);
    await w.agent("alpha", "cap.a");
    const lastStored = await w.instance("alpha", "a1", "ready");
    await w.instance("alpha", "a1", "draining");
    const recovered = await startFeed(store, lastStored);
    expect(recovered.events).toEqual([]);
    expect(recovered.view.instance("alpha", "a1")?.status).toBe("draining");
  });

  it("starts after the publisher's watermark: a long run of heartbeats after the last event reads no history", async () => {
    const store = new MemoryStore(4);
    const w = new Writer(store);
    const witness = await startFeed(store, null);
    await w.agent("alpha", "cap.a");
    for (let i = 0; i < 50; i++) await w.instance("alpha", `a${i}`, "ready");
    const lastStored = await w.instance("alpha", "a50", "ready");
    // A quiet fleet: every instance heartbeats five times (more than the history keeps).
    for (let hb = 1; hb <= 5; hb++) for (let i = 0; i <= 50; i++) await w.instance("alpha", `a${i}`, "ready", hb);
    // The leader's renewal: its backlog was empty with all of this applied.
    const mark = await store.lastRevision();
    await store.write(LEASE_KEY, new TextEncoder().encode(JSON.stringify({ holder: "r1", renewed_at: 1, published_through: mark })), 0);
    // Then, before it dies: a few heartbeats and one transition whose event it never stored.
    await w.instance("alpha", "a1", "ready", 6);
    await w.instance("alpha", "a2", "draining", 6);
    await w.instance("alpha", "a2", "draining", 7);
    const last = await store.lastRevision();
    await expect.poll(() => witness.view.revision).toBe(last);
    const expected = summary(witness.events.filter((e) => e.revision > mark));
    expect(expected.map((e) => e.type)).toEqual(["registry.agent.status_changed"]);

    const reads: string[] = [];
    const spy: StoreHistory = { historyDepth: store.historyDepth, history: (key) => (reads.push(key), store.history(key)), watchKept: () => store.watchKept() };
    const unrecoverable: number[] = [];
    const recovered = await startFeed(store, lastStored, unrecoverable, spy);
    expect(summary(recovered.events)).toEqual(expected);
    expect(unrecoverable).toEqual([]);
    // Only the two keys written after the watermark, not the 51 heartbeating since the last event.
    expect(reads.sort()).toEqual([instanceKey("alpha", "a1"), instanceKey("alpha", "a2")]);
    expect(recovered.view.revision).toBe(last);
    expect(recovered.view.instance("alpha", "a2")?.status).toBe("draining");

    // Without the watermark (a lease of an older version), the same start counts the 51 keys
    // heartbeating since the last event as unrecoverable, though no event was missed.
    const counted: number[] = [];
    await startFeed(store, lastStored, counted, store, false);
    expect(counted).toEqual([51]);
  });

  it("finds the earlier values of many keys in one pass over the kept values, not a history read per key", async () => {
    const store = new MemoryStore(4);
    const w = new Writer(store);
    const witness = await startFeed(store, null);
    await w.agent("alpha", "cap.a");
    for (let i = 0; i < 100; i++) await w.instance("alpha", `a${i}`, "ready");
    const lastStored = await w.instance("alpha", "x", "ready");
    // 100 pre-existing keys change after the last stored event, and 20 new ones appear.
    for (let i = 0; i < 100; i++) await w.instance("alpha", `a${i}`, i % 2 === 0 ? "draining" : "ready", 5);
    for (let i = 0; i < 20; i++) await w.instance("alpha", `n${i}`, "ready");
    const last = await store.lastRevision();
    await expect.poll(() => witness.view.revision).toBe(last);
    const expected = summary(witness.events.filter((e) => e.revision >= lastStored));
    expect(expected.filter((e) => e.type === "registry.agent.status_changed")).toHaveLength(50);

    const reads: string[] = [];
    let scans = 0;
    const spy: StoreHistory = {
      historyDepth: store.historyDepth,
      history: (key) => (reads.push(key), store.history(key)),
      watchKept: () => (scans++, store.watchKept()),
    };
    const unrecoverable: number[] = [];
    const recovered = await startFeed(store, lastStored, unrecoverable, spy, false);
    expect(summary(recovered.events)).toEqual(expected);
    expect(unrecoverable).toEqual([]);
    expect(reads).toEqual([]);
    expect(scans).toBe(1);
    expect(recovered.view.revision).toBe(last);
  });
});
