/**
 * The capability cache (kept fresh by events, stale but answering when the registry is away)
 * and watchEvents (replay from a time or a sequence, then live) on a real nats-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { createCapabilityCache, watchEvents, type WatchedEvent } from "../../src/client/index.js";

const enc = new TextEncoder();
let server: NatsServerHandle;
let nc: NatsConnection;
let fakeNc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer({ jetstream: true });
  nc = await connect({ servers: server.url });
  fakeNc = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc?.close();
  await fakeNc?.close();
  await server?.stop();
});

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("CapabilityCache", () => {
  it("loads, refreshes on events (coalesced, with min_revision), and answers stale when the registry is away", async () => {
    let revision = 10;
    const requests: { min_revision?: number }[] = [];
    const sub = fakeNc.subscribe("cc.capabilities", {
      callback: (_e, m) => {
        requests.push(m.json());
        const caps = [{ name: "text.summarize", description: "d", providers: ["summarizer"], input_schema: {}, output_schema: {} }];
        // A slow answer lets several events pile up behind one refresh.
        setTimeout(() => m.respond(enc.encode(JSON.stringify({ capabilities: revision > 10 ? [...caps, { ...caps[0], name: "text.translate" }] : caps, revision }))), 30);
      },
    });
    await fakeNc.flush();

    let now = 1_000_000;
    const changes: number[] = [];
    const cache = await createCapabilityCache(nc, { prefix: "cc", resyncMs: 60_000, now: () => now, onChange: (_c, rev) => changes.push(rev) });
    expect(cache.lookup("text.summarize")).toMatchObject({ value: { providers: ["summarizer"] }, stale: false, revision: 10, ageMs: 0 });
    expect(cache.lookup("text.translate").value).toBeUndefined();
    expect(requests).toEqual([{}]); // nothing to wait for on the first load

    revision = 12;
    for (let i = 0; i < 10; i++) {
      fakeNc.publish("cc.capability.changed.text.translate", enc.encode(JSON.stringify({ data: { capability: "text.translate", revision: 12 } })));
    }
    await until(() => cache.lookup("text.translate").value !== undefined, "the refresh after the events");
    await until(() => requests.length >= 2 && cache.revision === 12, "refresh done");
    expect(requests.length).toBeLessThanOrEqual(3); // ten events, at most two refreshes
    expect(requests[1]).toEqual({ min_revision: 12 });
    expect(changes).toEqual([10, 12]);

    await cache.refresh(); // settles a refresh that may still be queued behind the events
    sub.unsubscribe();
    await fakeNc.flush();
    now += 45_000;
    await cache.refresh();
    const answer = cache.lookup("text.summarize");
    expect(answer.stale).toBe(true);
    expect(answer.ageMs).toBe(45_000);
    expect(answer.value?.name).toBe("text.summarize");
    expect(cache.snapshot().value).toHaveLength(2);
    await cache.close();
  });
});

describe("watchEvents", () => {
  const event = (type: string, subject: string, data: Record<string, unknown>) => ({
    specversion: "1.0",
    id: `${type}-${subject}-${String(data["revision"])}`,
    source: "agent-registry",
    type,
    time: new Date().toISOString(),
    subject,
    datacontenttype: "application/json",
    data,
  });

  it("replays from a sequence or a duration, filters by type and agent, then follows live events", async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "EV_TEST", subjects: ["ev.agent.>", "ev.capability.>", "ev.alert.>"] });
    const js = jetstream(nc);
    const pub = (subject: string, e: unknown) => js.publish(subject, JSON.stringify(e));
    await pub("ev.agent.registered.summarizer", event("registry.agent.registered", "summarizer", { agent_type: "summarizer", revision: 1 }));
    await pub("ev.capability.changed.text.summarize", event("registry.capability.changed", "text.summarize", { capability: "text.summarize", change: "added", providers: ["summarizer"], revision: 2 }));
    await pub("ev.agent.registered.translator", event("registry.agent.registered", "translator", { agent_type: "translator", revision: 3 }));
    await pub("ev.agent.deregistered.summarizer", event("registry.agent.deregistered", "summarizer", { agent_type: "summarizer", reason: "graceful", revision: 4 }));

    const take = async (iter: AsyncGenerator<WatchedEvent>, n: number) => {
      const out: WatchedEvent[] = [];
      for await (const e of iter) {
        out.push(e);
        if (out.length === n) break;
      }
      return out;
    };

    const all = await take(watchEvents(nc, { stream: "EV_TEST", prefix: "ev", since: 1 }), 4);
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(all[1]?.event.type).toBe("registry.capability.changed");

    const fromSeq = await take(watchEvents(nc, { stream: "EV_TEST", prefix: "ev", since: 3 }), 2);
    expect(fromSeq.map((e) => e.seq)).toEqual([3, 4]);

    // Several filter subjects: filtered on the server (2.10+) or in the client (older servers).
    const forAgent = await take(watchEvents(nc, { stream: "EV_TEST", prefix: "ev", since: "1h", agentType: "summarizer" }), 2);
    expect(forAgent.map((e) => [e.seq, e.event.type])).toEqual([
      [1, "registry.agent.registered"],
      [4, "registry.agent.deregistered"],
    ]);

    const byType = watchEvents(nc, { stream: "EV_TEST", prefix: "ev", since: new Date(Date.now() - 60_000), types: ["agent.registered"] });
    const firstTwo = await byType.next().then(async (a) => [a, await byType.next()]);
    expect(firstTwo.map((r) => (r.done ? -1 : r.value.seq))).toEqual([1, 3]);
    // Then live: an event stored after the replay arrives too.
    const live = byType.next();
    await pub("ev.agent.registered.late", event("registry.agent.registered", "late", { agent_type: "late", revision: 5 }));
    const got = await live;
    expect(got.done ? undefined : got.value).toMatchObject({ seq: 5, event: { subject: "late" } });
    await byType.return();

    const onlyNew = watchEvents(nc, { stream: "EV_TEST", prefix: "ev" });
    const next = onlyNew.next();
    // The consumer is created on the first next(); the ones above were deleted when they stopped.
    const deadline = Date.now() + 5000;
    while ((await jsm.streams.info("EV_TEST")).state.consumer_count !== 1) {
      if (Date.now() > deadline) throw new Error("the live watch created no consumer");
      await new Promise((r) => setTimeout(r, 10));
    }
    await pub("ev.alert.self_preservation", event("registry.alert.self_preservation", "registry", { revision: 6 }));
    const n = await next;
    expect(n.done ? undefined : n.value.seq).toBe(6);
    await onlyNew.return();
  });
});
