import { afterEach, describe, expect, it, vi } from "vitest";
import type { CloudEvent, StoreEvent } from "../../src/domain/events.js";
import { EventPublisher, type EventSink } from "../../src/service/event-publisher.js";
import { silentLogger } from "../../src/service/logger.js";

type Position = { revision: number; index: number };

/** A stream double: keeps what it was given in order, deduplicates by id like JetStream does. */
class FakeSink implements EventSink {
  readonly stored: Array<{ subject: string; event: CloudEvent; position: Position | null }> = [];
  publishCalls = 0;
  failNext = 0;

  async publish(subject: string, event: CloudEvent, position: Position | null): Promise<{ duplicate: boolean }> {
    this.publishCalls++;
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error("stream unavailable");
    }
    const duplicate = this.stored.some((s) => s.event.id === event.id);
    if (!duplicate) this.stored.push({ subject, event, position });
    return { duplicate };
  }

  async lastPosition(): Promise<Position | null> {
    return this.stored.at(-1)?.position ?? null;
  }

  ids(): string[] {
    return this.stored.map((s) => s.event.id);
  }
}

const ev = (revision: number, index = 0): StoreEvent => ({
  type: "registry.agent.status_changed",
  subject: "alpha",
  data: { agent_type: "alpha", instance_id: "i1", from: "ready", to: "draining", revision },
  revision,
  index,
  time: revision * 10,
});

const publishers: EventPublisher[] = [];
function makePublisher(sink: EventSink, hooks: ConstructorParameters<typeof EventPublisher>[0]["hooks"] = {}): EventPublisher {
  const p = new EventPublisher({ sink, subjectOf: (e) => `registry.${e.type.slice(9)}.${e.subject}`, log: silentLogger, now: () => 1000, hooks });
  publishers.push(p);
  return p;
}

afterEach(async () => {
  for (const p of publishers.splice(0)) await p.stop();
  vi.useRealTimers();
});

describe("EventPublisher", () => {
  it("buffers events while it is a follower", async () => {
    const sink = new FakeSink();
    const p = makePublisher(sink);
    p.enqueue([ev(1), ev(2, 0), ev(2, 1)]);
    await p.flush();
    expect(sink.publishCalls).toBe(0);
    expect(p.backlog).toBe(3);
  });

  it("publishes in store order once it leads, with ids from the store revision", async () => {
    const sink = new FakeSink();
    const published: string[] = [];
    const p = makePublisher(sink, { onPublished: (e, latency) => published.push(`${e.revision}-${e.index}@${latency}`) });
    p.enqueue([ev(1), ev(2, 0), ev(2, 1)]);
    await p.becomeLeader();
    await p.flush();
    expect(sink.ids()).toEqual(["1-0", "2-0", "2-1"]);
    expect(sink.stored[0]).toMatchObject({
      subject: "registry.agent.status_changed.alpha",
      position: { revision: 1, index: 0 },
      event: { type: "registry.agent.status_changed", source: "agent-registry", subject: "alpha", time: new Date(10).toISOString() },
    });
    expect(published).toEqual(["1-0@990", "2-0@980", "2-1@980"]);
    p.enqueue([ev(3), ev(4)]);
    await p.flush();
    expect(sink.ids()).toEqual(["1-0", "2-0", "2-1", "3-0", "4-0"]);
    expect(p.backlog).toBe(0);
  });

  it("on takeover skips what the stream already holds and publishes the rest once", async () => {
    const sink = new FakeSink();
    const oldLeader = makePublisher(sink);
    const follower = makePublisher(sink);
    const all = [ev(3), ev(4), ev(5, 0), ev(5, 1), ev(6), ev(7)];
    oldLeader.enqueue(all.slice(0, 3));
    await oldLeader.becomeLeader();
    await oldLeader.flush();
    oldLeader.stepDown(); // dies after publishing up to 5-0
    follower.enqueue(all);
    await follower.becomeLeader();
    await follower.flush();
    expect(sink.ids()).toEqual(["3-0", "4-0", "5-0", "5-1", "6-0", "7-0"]);
    expect(sink.publishCalls).toBe(6);
  });

  it("stops publishing when it steps down and resumes where it stopped", async () => {
    const sink = new FakeSink();
    const p = makePublisher(sink);
    await p.becomeLeader();
    p.enqueue([ev(1)]);
    await p.flush();
    p.stepDown();
    p.enqueue([ev(2), ev(3)]);
    await p.flush();
    expect(sink.ids()).toEqual(["1-0"]);
    expect(p.backlog).toBe(2);
    await p.becomeLeader();
    await p.flush();
    expect(sink.ids()).toEqual(["1-0", "2-0", "3-0"]);
  });

  it("retries a failed publish with backoff and keeps the order", async () => {
    vi.useFakeTimers();
    const sink = new FakeSink();
    sink.failNext = 2;
    const failures: unknown[] = [];
    const p = makePublisher(sink, { onFailure: (err) => failures.push(err) });
    p.enqueue([ev(1), ev(2)]);
    await p.becomeLeader();
    await vi.advanceTimersByTimeAsync(150);
    expect(sink.ids()).toEqual([]);
    expect(failures).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    await p.flush();
    expect(failures).toHaveLength(2);
    expect(sink.ids()).toEqual(["1-0", "2-0"]);
    expect(sink.publishCalls).toBe(4);
  });

  it("takes no step while the stream cannot say what it holds, and publishes everything (deduplicated)", async () => {
    const sink = new FakeSink();
    await sink.publish("s", { id: "1-0" } as CloudEvent, { revision: 1, index: 0 });
    sink.lastPosition = () => Promise.reject(new Error("no stream info"));
    const p = makePublisher(sink);
    p.enqueue([ev(1), ev(2)]);
    await p.becomeLeader();
    await p.flush();
    expect(sink.ids()).toEqual(["1-0", "2-0"]);
    expect(p.backlog).toBe(0);
  });

  it("stops without publishing more", async () => {
    const sink = new FakeSink();
    const p = makePublisher(sink);
    await p.stop();
    p.enqueue([ev(1)]);
    await p.becomeLeader();
    await p.flush();
    expect(sink.publishCalls).toBe(0);
  });
});
