/**
 * The heard fan-out against an in-memory bus: what goes on the wire, when, and what a peer
 * makes of it (docs/architecture.md, "Every replica hears every heartbeat", decision B).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HeardFanout, type HeardBus, type HeardFanoutDeps } from "../../../../src/service/liveness/heard-fanout.js";
import type { Logger } from "../../../../src/kit/logger.js";

const ROOT = "registry._replica.heard";
const encode = (s: string): Uint8Array => new TextEncoder().encode(s);
const decode = (d: Uint8Array): string => new TextDecoder().decode(d);

function matches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length || (p[i] !== "*" && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** Delivers each publish to every matching subscriber, at once or on a microtask. */
class MemoryBus implements HeardBus {
  readonly published: Array<{ subject: string; text: string; bytes: number }> = [];
  private readonly subs = new Set<{ pattern: string; onMessage: (subject: string, data: Uint8Array) => void }>();
  /** Drops every message, as a server does for a publish or subscribe it does not permit. */
  dropAll = false;

  constructor(private readonly delivery: "sync" | "microtask" = "sync") {}

  get subscriptions(): number {
    return this.subs.size;
  }

  publish(subject: string, data: Uint8Array): void {
    this.published.push({ subject, text: decode(data), bytes: data.length });
    if (this.dropAll) return;
    for (const sub of [...this.subs]) {
      if (!matches(sub.pattern, subject)) continue;
      if (this.delivery === "sync") sub.onMessage(subject, data);
      else queueMicrotask(() => this.subs.has(sub) && sub.onMessage(subject, data));
    }
  }

  subscribe(pattern: string, onMessage: (subject: string, data: Uint8Array) => void): { unsubscribe(): void } {
    const sub = { pattern, onMessage };
    this.subs.add(sub);
    return { unsubscribe: () => this.subs.delete(sub) };
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }
}

type LogCall = { level: string; obj: unknown; msg: string | undefined };
function recordingLogger(calls: LogCall[]): Logger {
  const at =
    (level: string) =>
    (a: object | string, b?: string): void => {
      calls.push(typeof a === "string" ? { level, obj: undefined, msg: a } : { level, obj: a, msg: b });
    };
  const log: Logger = { trace: at("trace"), debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => log };
  return log;
}

type Heard = [string, string, number | undefined];

function replica(bus: HeardBus, name: string, extra: Partial<HeardFanoutDeps> = {}) {
  const heard: Heard[] = [];
  const lost: number[] = [];
  const sent: number[] = [];
  const logs: LogCall[] = [];
  const fanout = new HeardFanout({
    bus,
    subjectRoot: ROOT,
    replica: name,
    log: recordingLogger(logs),
    onHeard: (t, i, a) => heard.push([t, i, a]),
    onBatchesLost: (n) => lost.push(n),
    onBatchSent: (n) => sent.push(n),
    ...extra,
  });
  return { fanout, heard, lost, sent, logs };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("HeardFanout sending", () => {
  it("batches the entries of one period into one message on its own subject", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a");
    a.fanout.note("weather", "w1", 2);
    a.fanout.note("weather", "w2");
    a.fanout.note("billing", "b-1", 0);
    expect(bus.published).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);

    await vi.advanceTimersByTimeAsync(19);
    expect(bus.published).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(bus.published).toEqual([{ subject: `${ROOT}.a`, text: "v1 1\nweather.w1 2\nweather.w2\nbilling.b-1 0", bytes: 42 }]);
    expect(a.sent).toEqual([3]);
    // Nothing pending, so no timer.
    expect(vi.getTimerCount()).toBe(0);

    a.fanout.note("weather", "w1", 3);
    await vi.advanceTimersByTimeAsync(20);
    expect(bus.published.map((p) => p.text)).toEqual(["v1 1\nweather.w1 2\nweather.w2\nbilling.b-1 0", "v1 2\nweather.w1 3"]);
  });

  it("sends as soon as a batch reaches maxBatchBytes, never above it", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a", { maxBatchBytes: 200 });
    const b = replica(bus, "b");
    for (let i = 0; i < 50; i++) a.fanout.note("weather", `inst-${i}`, i);
    // 50 lines of about 17 bytes: several full batches went out without waiting for the timer.
    expect(bus.published.length).toBeGreaterThanOrEqual(4);
    for (const p of bus.published) expect(p.bytes).toBeLessThanOrEqual(200);
    expect(bus.published.map((p) => p.text.split("\n")[0])).toEqual(bus.published.map((_, i) => `v1 ${i + 1}`));

    await b.fanout.start();
    await vi.advanceTimersByTimeAsync(20);
    expect(a.sent.reduce((x, y) => x + y, 0)).toBe(50);
    expect(vi.getTimerCount()).toBe(0);
    b.fanout.stop();
  });

  it("sends a lone entry larger than maxBatchBytes on its own", () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a", { maxBatchBytes: 40 });
    a.fanout.note("t", "x");
    a.fanout.note("weather", "a-rather-long-instance-id-0123456789", 7);
    expect(bus.published.map((p) => p.text)).toEqual(["v1 1\nt.x", "v1 2\nweather.a-rather-long-instance-id-0123456789 7"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("refuses entries that are not two subject tokens, so no line can be injected", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a");
    a.fanout.note("weather", "w1\nforged.x");
    a.fanout.note("we.ather", "w1");
    a.fanout.note("weather", "w 1");
    a.fanout.note("", "w1");
    a.fanout.note("weather", "w1", -1);
    a.fanout.note("weather", "w2", 1.5);
    await vi.advanceTimersByTimeAsync(20);
    expect(bus.published.map((p) => p.text)).toEqual(["v1 1\nweather.w1\nweather.w2"]);
  });

  it("publishes on a single-token subject whatever the replica is called", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "host.example com:4222");
    expect(a.fanout.ownSubject).toBe(`${ROOT}.host_example_com_4222`);
    a.fanout.note("t", "i");
    await vi.advanceTimersByTimeAsync(20);
    expect(bus.published[0]?.subject).toBe(`${ROOT}.host_example_com_4222`);
  });
});

describe("HeardFanout between replicas", () => {
  it("delivers entries to the other replica, with and without active_tasks, and skips its own", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a");
    const b = replica(bus, "b");
    await a.fanout.start();
    await b.fanout.start();

    a.fanout.note("weather", "w1", 4);
    a.fanout.note("weather", "w2");
    b.fanout.note("billing", "b1", 0);
    await vi.advanceTimersByTimeAsync(20);

    expect(b.heard).toEqual([
      ["weather", "w1", 4],
      ["weather", "w2", undefined],
    ]);
    expect(a.heard).toEqual([["billing", "b1", 0]]);
    expect(a.lost).toEqual([]);
    expect(b.lost).toEqual([]);
    expect(a.fanout.malformedLines + b.fanout.malformedLines).toBe(0);
    a.fanout.stop();
    b.fanout.stop();
  });

  it("counts a gap in a peer's sequence as lost batches", () => {
    const bus = new MemoryBus();
    const b = replica(bus, "b");
    b.fanout.start().catch(() => {});
    bus.publish(`${ROOT}.a`, encode("v1 1\nt.i1"));
    bus.publish(`${ROOT}.a`, encode("v1 2\nt.i2"));
    bus.publish(`${ROOT}.a`, encode("v1 5\nt.i5"));
    bus.publish(`${ROOT}.c`, encode("v1 7"));
    bus.publish(`${ROOT}.c`, encode("v1 9"));
    expect(b.lost).toEqual([2, 1]);
    expect(b.heard.map((h) => h[1])).toEqual(["i1", "i2", "i5"]);
    b.fanout.stop();
  });

  it("takes a sequence that goes back for a restarted peer, not for a loss", () => {
    const bus = new MemoryBus();
    const b = replica(bus, "b");
    b.fanout.start().catch(() => {});
    for (const seq of [1, 2, 3, 1, 2]) bus.publish(`${ROOT}.a`, encode(`v1 ${seq}\nt.i${seq}`));
    expect(b.lost).toEqual([]);
    // Tracking restarted from 1: a gap after the restart is still seen.
    bus.publish(`${ROOT}.a`, encode("v1 4\nt.i4"));
    expect(b.lost).toEqual([1]);
    expect(b.heard).toHaveLength(6);
    b.fanout.stop();
  });

  it("skips malformed lines, delivers the rest, and logs once per batch", () => {
    const bus = new MemoryBus();
    const b = replica(bus, "b");
    b.fanout.start().catch(() => {});
    const lines = [
      "weather.w1 3",
      "nodot",
      ".noType",
      "noId.",
      "t.i x",
      "t.i 1 2",
      "t.a.b",
      "t x.i",
      "t.i -1",
      "",
      "weather.w2",
      "weather.w3 12",
    ];
    bus.publish(`${ROOT}.a`, encode(`v1 1\n${lines.join("\n")}\n`));
    expect(b.heard).toEqual([
      ["weather", "w1", 3],
      ["weather", "w2", undefined],
      ["weather", "w3", 12],
    ]);
    expect(b.fanout.malformedLines).toBe(8);
    expect(b.logs.filter((l) => l.level === "debug")).toEqual([{ level: "debug", obj: { subject: `${ROOT}.a`, malformed_lines: 8 }, msg: expect.any(String) }]);
    b.fanout.stop();
  });

  it("keeps delivering a batch's entries when onHeard throws, and logs once", () => {
    const bus = new MemoryBus();
    const seen: string[] = [];
    const b = replica(bus, "b", {
      onHeard: (_t, i) => {
        seen.push(i);
        if (i !== "i2") throw new Error(`boom ${i}`);
      },
    });
    b.fanout.start().catch(() => {});
    expect(() => bus.publish(`${ROOT}.a`, encode("v1 1\nt.i1\nt.i2\nt.i3"))).not.toThrow();
    expect(seen).toEqual(["i1", "i2", "i3"]);
    const errors = b.logs.filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.obj).toMatchObject({ failures: 2, err: new Error("boom i1") });
    b.fanout.stop();
  });

  it("drops a batch with an unknown header, warning at most once a minute", async () => {
    const bus = new MemoryBus();
    const b = replica(bus, "b");
    b.fanout.start().catch(() => {});
    for (const bad of ["v2 1\nt.i", "v1 x\nt.i", "v1 0\nt.i", "", "t.i"]) bus.publish(`${ROOT}.a`, encode(bad));
    expect(b.heard).toEqual([]);
    expect(b.logs.filter((l) => l.level === "warn")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60_000);
    bus.publish(`${ROOT}.a`, encode("v9 1"));
    expect(b.logs.filter((l) => l.level === "warn")).toHaveLength(2);
    b.fanout.stop();
  });

  it("drops a received message over 1 MiB", () => {
    const bus = new MemoryBus();
    const b = replica(bus, "b");
    b.fanout.start().catch(() => {});
    const big = `v1 1\n${"t.i 1\n".repeat(200_000)}`;
    bus.publish(`${ROOT}.a`, encode(big));
    expect(b.heard).toEqual([]);
    expect(b.logs.filter((l) => l.level === "warn").map((l) => l.obj)).toEqual([{ subject: `${ROOT}.a`, bytes: big.length }]);
    b.fanout.stop();
  });
});

describe("HeardFanout connection state", () => {
  it("drops pending and new entries while disconnected, and sends again after the reconnect", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a");
    a.fanout.note("t", "before");
    a.fanout.disconnected();
    expect(vi.getTimerCount()).toBe(0);
    a.fanout.note("t", "during");
    await vi.advanceTimersByTimeAsync(100);
    expect(bus.published).toEqual([]);
    expect(a.fanout.pendingEntries).toBe(0);

    a.fanout.reconnected();
    a.fanout.note("t", "after");
    await vi.advanceTimersByTimeAsync(20);
    // The dropped batch never took a seq, so peers see no gap.
    expect(bus.published.map((p) => p.text)).toEqual(["v1 1\nt.after"]);
  });

  it("does not count a batch whose publish threw, and keeps going", async () => {
    const bus = new MemoryBus();
    let closed = true;
    const publish = bus.publish.bind(bus);
    bus.publish = (s, d) => {
      if (closed) throw new Error("connection closed");
      publish(s, d);
    };
    const a = replica(bus, "a");
    a.fanout.note("t", "i1");
    await vi.advanceTimersByTimeAsync(20);
    expect(a.sent).toEqual([]);
    expect(a.logs.filter((l) => l.level === "warn")).toHaveLength(1);
    closed = false;
    a.fanout.note("t", "i2");
    await vi.advanceTimersByTimeAsync(20);
    expect(bus.published.map((p) => p.text)).toEqual(["v1 1\nt.i2"]);
  });
});

describe("HeardFanout start and stop", () => {
  for (const delivery of ["sync", "microtask"] as const) {
    it(`start() resolves once its own probe came back (${delivery} delivery)`, async () => {
      const bus = new MemoryBus(delivery);
      const a = replica(bus, "a");
      const b = replica(bus, "b");
      await b.fanout.start();
      await a.fanout.start(1000);
      // The probe is a header-only batch on the replica's own subject, seq 1.
      expect(bus.published.filter((p) => p.subject === `${ROOT}.a`).map((p) => p.text)).toEqual(["v1 1"]);
      expect(vi.getTimerCount()).toBe(0);
      expect(a.heard).toEqual([]);
      // The probe is b's baseline for a: a's first batch is seq 2 and no loss.
      a.fanout.note("t", "i");
      await vi.advanceTimersByTimeAsync(20);
      expect(b.heard).toEqual([["t", "i", undefined]]);
      expect(b.lost).toEqual([]);
      a.fanout.stop();
      b.fanout.stop();
    });
  }

  it("start() sends what was pending before its probe", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a");
    a.fanout.note("t", "early");
    await a.fanout.start();
    expect(bus.published.map((p) => p.text)).toEqual(["v1 1\nt.early", "v1 2"]);
    expect(vi.getTimerCount()).toBe(0);
    a.fanout.stop();
  });

  it("start() rejects with the permission hint when its probe never comes back", async () => {
    const bus = new MemoryBus();
    bus.dropAll = true;
    const a = replica(bus, "a");
    const started = a.fanout.start(5000);
    const assertion = expect(started).rejects.toThrow(/could not publish or subscribe on registry\._replica\.heard\.a .*missing NATS permission.*registry\._replica\.heard\.>/);
    await vi.advanceTimersByTimeAsync(4999);
    expect(bus.subscriptions).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await assertion;
    expect(vi.getTimerCount()).toBe(0);
    // Nothing of the failed start lingers: a later start subscribes afresh.
    expect(bus.subscriptions).toBe(0);
    bus.dropAll = false;
    await a.fanout.start();
    expect(bus.subscriptions).toBe(1);
    a.fanout.stop();
  });

  it("start() rejects with the hint when the flush fails", async () => {
    const bus = new MemoryBus();
    bus.dropAll = true;
    bus.flush = () => Promise.reject(new Error("Permissions Violation for Publish"));
    const a = replica(bus, "a");
    await expect(a.fanout.start()).rejects.toThrow(/missing NATS permission/);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stop() is idempotent, leaves no timer, and ends sending and receiving", async () => {
    const bus = new MemoryBus();
    const a = replica(bus, "a");
    const b = replica(bus, "b");
    await a.fanout.start();
    await b.fanout.start();
    const published = bus.published.length;
    a.fanout.note("t", "pending");
    expect(vi.getTimerCount()).toBe(1);

    a.fanout.stop();
    a.fanout.stop();
    b.fanout.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(bus.subscriptions).toBe(0);
    a.fanout.note("t", "after");
    bus.publish(`${ROOT}.c`, encode("v1 1\nt.x"));
    await vi.advanceTimersByTimeAsync(100);
    expect(bus.published.length).toBe(published + 1);
    expect(b.heard).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
