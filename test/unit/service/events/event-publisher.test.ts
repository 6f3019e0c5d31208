import { afterEach, describe, expect, it, vi } from "vitest";
import type { CloudEvent, StoreEvent } from "../../../../src/domain/view/events.js";
import { subjects } from "../../../../src/protocol/subjects.js";
import { EventPublisher, type EventSink } from "../../../../src/service/events/event-publisher.js";
import { silentLogger } from "../../../../src/kit/logger.js";

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
  const p = new EventPublisher({ sink, subjects: subjects("registry"), log: silentLogger, now: () => 1000, hooks });
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

describe("events no store transition causes", () => {
  it("stores the self-preservation alert on <prefix>.alert.self_preservation with the replica in its id", async () => {
    const sink = new FakeSink();
    const p = new EventPublisher({ sink, subjects: subjects("reg"), log: silentLogger, now: () => 5000, replica: "r1" });
    publishers.push(p);
    await p.selfPreservationAlert({ active: true, overdue: 8, live: 10, ratio: 0.8, threshold: 0.5 });
    expect(sink.stored).toHaveLength(1);
    const { subject, event, position } = sink.stored[0]!;
    expect(subject).toBe("reg.alert.self_preservation");
    expect(position).toBeNull();
    expect(event).toMatchObject({ type: "registry.alert.self_preservation", id: "alert-r1-5000", subject: "self_preservation", data: { active: true, overdue: 8 } });
  });

  it("logs, and does not throw, when the alert cannot be stored", async () => {
    const sink = new FakeSink();
    sink.failNext = 1;
    const p = makePublisher(sink);
    await expect(p.selfPreservationAlert({ active: false, overdue: 0, live: 1, ratio: 0, threshold: 0.5 })).resolves.toBeUndefined();
    expect(sink.stored).toEqual([]);
  });

  it("announces heartbeat events on core NATS only, and not at all when switched off", () => {
    const sink = new FakeSink();
    const announced: Array<[string, CloudEvent]> = [];
    const on = new EventPublisher({ sink, subjects: subjects("registry"), log: silentLogger, now: () => 7, announce: (s, json) => announced.push([s, JSON.parse(json) as CloudEvent]) });
    publishers.push(on);
    on.heartbeat("alpha", "i1", "ready", undefined);
    on.heartbeat("alpha", "i2", "draining", 3);
    expect(announced.map(([s]) => s)).toEqual(["registry.agent.heartbeat.alpha", "registry.agent.heartbeat.alpha"]);
    expect(announced.map(([, e]) => e.data)).toEqual([
      { agent_type: "alpha", instance_id: "i1", status: "ready", active_tasks: null },
      { agent_type: "alpha", instance_id: "i2", status: "draining", active_tasks: 3 },
    ]);
    expect(announced[0]![1]).toEqual({
      specversion: "1.0", id: "hb-alpha-i1-7", source: "agent-registry", type: "registry.agent.heartbeat", time: "1970-01-01T00:00:00.007Z",
      subject: "alpha", datacontenttype: "application/json", data: { agent_type: "alpha", instance_id: "i1", status: "ready", active_tasks: null },
    });
    expect(sink.publishCalls).toBe(0);
    makePublisher(sink).heartbeat("alpha", "i1", "ready", 1);
    expect(sink.publishCalls).toBe(0);
  });

  it("says events are stored through the applied revision only when nothing is pending, in flight or dropped", async () => {
    const sink = new FakeSink();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const publish = sink.publish.bind(sink);
    sink.publish = async (...args) => {
      await gate;
      return publish(...args);
    };
    const p = makePublisher(sink);
    expect(p.storedThrough(7)).toBe(7);
    p.enqueue([ev(8)]);
    expect(p.storedThrough(9)).toBeNull();
    await p.becomeLeader();
    // In flight: not stored yet.
    expect(p.storedThrough(9)).toBeNull();
    release();
    await p.flush();
    expect(p.storedThrough(9)).toBe(9);
    // A follower over its bound drops the oldest unstored events: the watermark stays below them.
    p.stepDown();
    for (let i = 0; i < 201; i++) p.enqueue(Array.from({ length: 1000 }, (_, j) => ev(10 + 1000 * i + j)));
    // The leader stored the rest meanwhile: taking over prunes them all.
    sink.stored.push({ subject: "x", event: sink.stored[0]!.event, position: { revision: 300_000, index: 0 } });
    await p.becomeLeader();
    expect(p.backlog).toBe(0);
    expect(p.storedThrough(300_000)).toBe(9);
  });
});
