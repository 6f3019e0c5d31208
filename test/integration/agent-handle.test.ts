/**
 * The agent handle of the SDK against a fake registry on a real nats-server: heartbeats on the
 * interval the registry returns, registering again when forgotten or after a reconnect,
 * backing off while no registry answers, and deregistering on close.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headers, type Msg, type NatsConnection, type Subscription } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { connectionOptions, InvalidSpecError, registerAgent, type AgentEvent, type AgentSpecInput } from "../../src/client/index.js";

const enc = new TextEncoder();

const spec = (agentType: string): AgentSpecInput => ({
  agent_type: agentType,
  version: "1.0.0",
  description: "summarises text",
  owner_team: "docs",
  capabilities: [{ name: "text.summarize", description: "summarise", input_schema: {}, output_schema: {} }],
  nats_subject: `agents.${agentType}.tasks`,
  consumer_group: agentType,
});

type Beat = { instanceId: string; body: { status?: string; active_tasks?: number }; at: number };

/** Just enough of the registry's write API to exercise the agent side. */
class FakeRegistry {
  registers: { instance_id?: string; status?: string; heartbeat_interval_ms?: number }[] = [];
  beats: Beat[] = [];
  deregisters: string[] = [];
  readonly live = new Set<string>();
  rejectWith: { status: number; code: string } | undefined;
  #subs: Subscription[] = [];
  #next = 0;

  constructor(
    readonly nc: NatsConnection,
    readonly prefix: string,
    readonly intervalMs = 100,
  ) {}

  async start(): Promise<this> {
    const p = this.prefix;
    this.#subs = [
      this.nc.subscribe(`${p}.register.*`, { callback: (_e, m) => this.#register(m) }),
      this.nc.subscribe(`${p}.heartbeat.*.*`, { callback: (_e, m) => this.#heartbeat(m) }),
      this.nc.subscribe(`${p}.deregister.*.*`, { callback: (_e, m) => this.#deregister(m) }),
    ];
    await this.nc.flush();
    return this;
  }

  stop(): void {
    for (const s of this.#subs) s.unsubscribe();
  }

  /** Forgets an instance, as an eviction during a partition would. */
  forget(id: string): void {
    this.live.delete(id);
  }

  #error(m: Msg, status: number, code: string): void {
    const h = headers();
    h.set("Nats-Service-Error-Code", String(status));
    h.set("Nats-Service-Error", code);
    m.respond(enc.encode(JSON.stringify({ error: { code, message: code } })), { headers: h });
  }

  #register(m: Msg): void {
    if (this.rejectWith) return this.#error(m, this.rejectWith.status, this.rejectWith.code);
    const body = m.json<{ spec: AgentSpecInput; instance_id?: string; status?: string; heartbeat_interval_ms?: number }>();
    this.registers.push({ instance_id: body.instance_id, status: body.status, heartbeat_interval_ms: body.heartbeat_interval_ms });
    const id = body.instance_id ?? `gen${++this.#next}`;
    this.live.add(id);
    const reply = {
      agent_type: body.spec.agent_type,
      version: body.spec.version,
      instance_id: id,
      status: body.status ?? "ready",
      revision: this.registers.length,
      heartbeat_subject: `${this.prefix}.heartbeat.${body.spec.agent_type}.${id}`,
      // The registry bounds the requested interval; the agent must use this value.
      heartbeat_interval_ms: this.intervalMs,
      evict_after_ms: this.intervalMs * 3,
      warnings: [],
    };
    m.respond(enc.encode(JSON.stringify(reply)));
  }

  #heartbeat(m: Msg): void {
    const id = m.subject.split(".").at(-1) ?? "";
    if (!this.live.has(id)) return this.#error(m, 404, "unknown_instance");
    const body = m.data.length > 0 ? m.json<Beat["body"]>() : {};
    this.beats.push({ instanceId: id, body, at: Date.now() });
    m.respond(enc.encode(JSON.stringify({ status: body.status ?? "ready", revision: 1 })));
  }

  #deregister(m: Msg): void {
    const [, , agentType, id = ""] = m.subject.split(".");
    if (!this.live.delete(id)) return this.#error(m, 404, "unknown_instance");
    this.deregisters.push(id);
    m.respond(enc.encode(JSON.stringify({ agent_type: agentType, instance_id: id, agent_removed: this.live.size === 0, revision: 9 })));
  }
}

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let server: NatsServerHandle;
let registryNc: NatsConnection;
let agentNc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer({ jetstream: false });
  registryNc = await connect(connectionOptions({ servers: server.url, overrides: { reconnectTimeWait: 100 } }));
  agentNc = await connect(connectionOptions({ servers: server.url, overrides: { reconnectTimeWait: 100 } }));
});

afterAll(async () => {
  await agentNc?.close();
  await registryNc?.close();
  await server?.stop();
});

describe("registerAgent", () => {
  it("heartbeats on the interval the registry returned, reporting status and active tasks", async () => {
    const fake = await new FakeRegistry(registryNc, "hb", 100).start();
    const handle = await registerAgent(agentNc, spec("beater"), { prefix: "hb", heartbeatIntervalMs: 60_000 });
    expect(handle.instanceId).toBe("gen1");
    expect(fake.registers[0]).toMatchObject({ heartbeat_interval_ms: 60_000, status: "ready" });

    await until(() => fake.beats.length >= 5, "5 heartbeats");
    const gaps = fake.beats.slice(1).map((b, i) => b.at - (fake.beats[i]?.at ?? 0));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(70);
    expect(mean).toBeLessThan(200);
    expect(fake.beats[0]?.body).toEqual({ status: "ready", active_tasks: 0 });

    handle.setActiveTasks(3);
    const before = fake.beats.length;
    await handle.setStatus("draining");
    expect(fake.beats.length).toBeGreaterThan(before);
    expect(fake.beats.at(-1)?.body).toEqual({ status: "draining", active_tasks: 3 });
    expect(handle.status).toBe("draining");

    await handle.close();
    fake.stop();
  });

  it("registers again with the same instance_id after unknown_instance", async () => {
    const fake = await new FakeRegistry(registryNc, "evict", 80).start();
    const events: AgentEvent[] = [];
    const handle = await registerAgent(agentNc, spec("evicted"), { prefix: "evict", instanceId: "inst-1", onEvent: (e) => events.push(e) });
    await until(() => fake.beats.length >= 1, "a heartbeat");
    fake.forget("inst-1");
    await until(() => events.some((e) => e.type === "reregistered"), "reregistered");
    expect(events.find((e) => e.type === "reregistered")).toMatchObject({ reason: "unknown_instance" });
    expect(fake.registers.map((r) => r.instance_id)).toEqual(["inst-1", "inst-1"]);
    const beatsAfter = fake.beats.length;
    await until(() => fake.beats.length > beatsAfter, "heartbeats resume");
    await handle.close();
    fake.stop();
  });

  it("backs off while no registry answers, then registers when one appears", async () => {
    const events: AgentEvent[] = [];
    const pending = registerAgent(agentNc, spec("patient"), {
      prefix: "late",
      backoff: { initialMs: 20, maxMs: 80 },
      onEvent: (e) => events.push(e),
    });
    await until(() => events.filter((e) => e.type === "error").length >= 4, "4 failed attempts");
    const retries = events.flatMap((e) => (e.type === "error" ? [e.retryInMs ?? -1] : []));
    expect(retries.every((ms) => ms >= 10 && ms <= 80)).toBe(true);
    expect(events.every((e) => e.type !== "error" || e.phase === "register")).toBe(true);

    const fake = await new FakeRegistry(registryNc, "late", 100).start();
    const handle = await pending;
    expect(events.at(-1)?.type).toBe("registered");
    expect(fake.registers).toHaveLength(1);
    await handle.close();
    fake.stop();
  });

  it("throws a 4xx of the first registration into the caller", async () => {
    const fake = await new FakeRegistry(registryNc, "bad", 100).start();
    fake.rejectWith = { status: 400, code: "invalid_spec" };
    await expect(registerAgent(agentNc, spec("broken"), { prefix: "bad" })).rejects.toBeInstanceOf(InvalidSpecError);
    fake.stop();
  });

  it("close() stops heartbeats and deregisters", async () => {
    const fake = await new FakeRegistry(registryNc, "bye", 50).start();
    const events: AgentEvent[] = [];
    const handle = await registerAgent(agentNc, spec("leaver"), { prefix: "bye" });
    handle.on("deregistered", (e) => events.push(e));
    await until(() => fake.beats.length >= 2, "heartbeats");
    await handle.close();
    await handle.closed;
    expect(fake.deregisters).toEqual([handle.instanceId]);
    expect(events).toHaveLength(1);
    const count = fake.beats.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(fake.beats.length).toBe(count);
    fake.stop();
  });

  it("reports heartbeat failures while the registry is away, and comes back by itself", async () => {
    const fake = await new FakeRegistry(registryNc, "away", 50).start();
    const events: AgentEvent[] = [];
    const handle = await registerAgent(agentNc, spec("steady"), { prefix: "away", onEvent: (e) => events.push(e) });
    fake.stop();
    await until(() => events.filter((e) => e.type === "heartbeat_failed").length >= 2, "failed heartbeats");
    fake.forget(handle.instanceId); // evicted meanwhile
    await fake.start();
    await until(() => events.some((e) => e.type === "reregistered"), "reregistered");
    await handle.close();
    fake.stop();
  });

  it("registers again after the connection's reconnect", async () => {
    const fake = await new FakeRegistry(registryNc, "rc", 100).start();
    const events: AgentEvent[] = [];
    const handle = await registerAgent(agentNc, spec("reconnector"), { prefix: "rc", onEvent: (e) => events.push(e) });
    await server.restart();
    await until(() => events.some((e) => e.type === "reregistered"), "reregistered after reconnect", 15_000);
    expect(events.find((e) => e.type === "reregistered")).toMatchObject({ reason: "reconnect" });
    expect(fake.registers.at(-1)?.instance_id).toBe(handle.instanceId);
    await handle.close();
    fake.stop();
  });
});
