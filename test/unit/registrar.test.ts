import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/adapters/memory/memory-store.js";
import { RegistryError } from "../../src/domain/errors.js";
import { StoreConflictError, StoreUnavailableError, type Store, type StoreEntry, type StoreWatch } from "../../src/domain/ports.js";
import { agentKey, decodeAgentRecord, decodeInstanceRecord, instanceKey } from "../../src/domain/records.js";
import { SchemaChecker } from "../../src/domain/schema-check.js";
import { INSTANCE_ID_RE } from "../../src/domain/spec.js";
import { RegistryView } from "../../src/domain/view.js";
import { MAX_WRITE_ATTEMPTS, Registrar, type RegistrarSettings } from "../../src/service/registrar.js";

const settings: RegistrarSettings = {
  missedHeartbeats: 3,
  defaultHeartbeatIntervalMs: 30_000,
  minHeartbeatIntervalMs: 1000,
  maxHeartbeatIntervalMs: 3_600_000,
  duplicateCapabilities: "allow",
  heartbeatSubject: (t, i) => `registry.heartbeat.${t}.${i}`,
};

const spec = (type: string, extra: Record<string, unknown> = {}) => ({
  agent_type: type,
  version: "1.0.0",
  description: `${type} agent`,
  owner_team: "team",
  capabilities: [{ name: `${type}.run`, description: "runs", input_schema: {}, output_schema: {} }],
  nats_subject: `tasks.${type}`,
  consumer_group: type,
  ...extra,
});

/** A store that loses the next `failWrites` compare-and-sets, or cannot be reached. */
class FlakyStore implements Store {
  failWrites = 0;
  unavailable = false;
  writes = 0;
  constructor(readonly inner: MemoryStore) {}
  get(key: string): Promise<StoreEntry | null> {
    return this.inner.get(key);
  }
  watch(after: number): Promise<StoreWatch> {
    return this.inner.watch(after);
  }
  lastRevision(): Promise<number> {
    return this.inner.lastRevision();
  }
  async write(key: string, value: Uint8Array, expected: number): Promise<number> {
    this.writes++;
    if (this.unavailable) throw new StoreUnavailableError("store away");
    if (this.failWrites > 0) {
      this.failWrites--;
      throw new StoreConflictError(key);
    }
    return this.inner.write(key, value, expected);
  }
  remove(key: string, expected: number): Promise<void> {
    return this.inner.remove(key, expected);
  }
}

/** Applies everything the store holds beyond the view's revision. */
async function catchUp(store: Store, view: RegistryView): Promise<void> {
  const last = await store.lastRevision();
  if (view.revision >= last) return;
  const watch = await store.watch(view.revision);
  for await (const e of watch) {
    view.apply(e);
    if (e.revision >= last) break;
  }
  watch.stop();
}

let t: number;
let memory: MemoryStore;
let store: FlakyStore;
let view: RegistryView;
let conflicts: number;
let registrar: Registrar;

const make = (v: RegistryView, s: Store = store) =>
  new Registrar({ store: s, view: v, checker: new SchemaChecker(), clock: { now: () => t }, settings, onConflict: () => conflicts++ });

async function instanceRecord(type: string, id: string) {
  const e = await memory.get(instanceKey(type, id));
  return e && e.operation === "PUT" ? decodeInstanceRecord(e.value) : null;
}

async function rejection(p: Promise<unknown>): Promise<RegistryError> {
  const e = await p.then(() => null, (err: unknown) => err);
  if (e instanceof RegistryError) return e;
  throw new Error(`expected a RegistryError, got ${String(e)}`);
}

beforeEach(() => {
  t = 1_000_000;
  memory = new MemoryStore();
  store = new FlakyStore(memory);
  view = new RegistryView();
  conflicts = 0;
  registrar = make(view);
});

describe("Registrar.register", () => {
  it("writes the agent and the instance and answers with the registration", async () => {
    const reply = await registrar.register("alpha", { spec: spec("alpha"), metadata: { zone: "eu" } });
    expect(reply.instance_id).toMatch(INSTANCE_ID_RE);
    expect(reply.instance_id).toHaveLength(16);
    expect(reply).toMatchObject({
      agent_type: "alpha", version: "1.0.0", status: "ready", heartbeat_interval_ms: 30_000, evict_after_ms: 90_000, warnings: [],
      heartbeat_subject: `registry.heartbeat.alpha.${reply.instance_id}`,
    });
    expect(reply.revision).toBe(await memory.lastRevision());
    const agent = await memory.get(agentKey("alpha"));
    expect(decodeAgentRecord(agent!.value)).toMatchObject({ registered_at: t, updated_at: t, spec: { agent_type: "alpha" } });
    expect(await instanceRecord("alpha", reply.instance_id)).toMatchObject({ kind: "instance", last_heartbeat: t, metadata: { zone: "eu" }, spec_changed: true });
  });

  it("clamps the heartbeat interval and warns about it and unknown fields", async () => {
    const reply = await registrar.register("alpha", { spec: spec("alpha", { extra: 1 }), heartbeat_interval_ms: 10, instance_id: "i1" });
    expect(reply.heartbeat_interval_ms).toBe(1000);
    expect(reply.evict_after_ms).toBe(3000);
    expect(reply.warnings).toEqual(["spec.extra: unknown field, not stored", "heartbeat_interval_ms 10 outside 1000..3600000; using 1000"]);
  });

  it("refuses a spec naming another agent type and the reserved instance id", async () => {
    const e = await rejection(registrar.register("alpha", { spec: spec("beta") }));
    expect(e).toMatchObject({ code: "invalid_request", issues: [{ path: "spec.agent_type", message: "must be alpha" }] });
    expect((await rejection(registrar.register("alpha", { spec: spec("alpha"), instance_id: "static" }))).code).toBe("invalid_request");
    expect(store.writes).toBe(0);
  });

  it("is idempotent for the same instance and only refreshes its stamp", async () => {
    const first = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    await catchUp(memory, view);
    t += 500;
    const again = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    expect(again.revision).toBe(first.revision + 1);
    expect((await memory.get(agentKey("alpha")))?.revision).toBe(first.revision - 1);
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ registered_at: t - 500, last_heartbeat: t });
  });

  it("retries after a lost compare-and-set", async () => {
    store.failWrites = 1;
    const reply = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    expect(conflicts).toBe(1);
    expect(store.writes).toBe(3);
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ kind: "instance" });
    expect(reply.revision).toBe(await memory.lastRevision());
  });

  it("answers conflict after losing the race five times in a row", async () => {
    store.failWrites = Number.POSITIVE_INFINITY;
    const e = await rejection(registrar.register("alpha", { spec: spec("alpha") }));
    expect(e).toMatchObject({ code: "conflict", status: 409 });
    expect(e.cause).toBeInstanceOf(StoreConflictError);
    expect(conflicts).toBe(MAX_WRITE_ATTEMPTS);
    expect(store.writes).toBe(MAX_WRITE_ATTEMPTS);
  });

  it("answers unavailable when the store cannot be reached", async () => {
    store.unavailable = true;
    expect(await rejection(registrar.register("alpha", { spec: spec("alpha") }))).toMatchObject({ code: "unavailable", status: 503 });
  });

  it("refuses a nats_subject taken by another live type", async () => {
    await registrar.register("alpha", { spec: spec("alpha", { nats_subject: "tasks.shared" }) });
    await catchUp(memory, view);
    const e = await rejection(registrar.register("beta", { spec: spec("beta", { nats_subject: "tasks.shared" }) }));
    expect(e.code).toBe("conflict");
    // Once alpha has no live instance, its subject is free.
    await registrar.deregisterType("alpha");
    await catchUp(memory, view);
    expect((await registrar.register("beta", { spec: spec("beta", { nats_subject: "tasks.shared" }) })).agent_type).toBe("beta");
  });

  it("refuses a capability another live type provides under policy reject only", async () => {
    const caps = { capabilities: [{ name: "text.summarize", description: "", input_schema: {}, output_schema: {} }] };
    await registrar.register("alpha", { spec: spec("alpha", caps) });
    await catchUp(memory, view);
    const strict = new Registrar({ store, view, checker: new SchemaChecker(), clock: { now: () => t }, settings: { ...settings, duplicateCapabilities: "reject" } });
    const e = await rejection(strict.register("beta", { spec: spec("beta", caps) }));
    expect(e.code).toBe("conflict");
    expect(e.message).toContain("text.summarize");
    expect((await registrar.register("beta", { spec: spec("beta", caps) })).agent_type).toBe("beta");
  });

  it("re-reads the store when another replica wrote the agent record first", async () => {
    // A replica whose view lags plans a create of the agent record, loses, re-reads and succeeds.
    await make(new RegistryView()).register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    const reply = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    expect(conflicts).toBe(1);
    expect(await instanceRecord("alpha", reply.instance_id)).toMatchObject({ kind: "instance" });
  });
});

describe("Registrar.heartbeat and deregister", () => {
  beforeEach(async () => {
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    await catchUp(memory, view);
  });

  it("stamps the registry clock and applies status and active_tasks", async () => {
    t += 2000;
    const r = await registrar.heartbeat("alpha", "i1", { status: "draining", active_tasks: 3 });
    expect(r).toEqual({ status: "draining", revision: await memory.lastRevision() });
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ last_heartbeat: t, status: "draining", active_tasks: 3 });
  });

  it("checks the store before answering unknown_instance when the view lags", async () => {
    const lagging = make(new RegistryView());
    expect((await lagging.heartbeat("alpha", "i1", {})).status).toBe("ready");
    const e = await rejection(lagging.heartbeat("alpha", "never", {}));
    expect(e).toMatchObject({ code: "unknown_instance", status: 404 });
    expect(conflicts).toBe(0);
  });

  it("retries on the store's revision when its view holds an older one", async () => {
    const stale = new RegistryView();
    await catchUp(memory, stale);
    await registrar.heartbeat("alpha", "i1", { active_tasks: 1 });
    t += 10;
    await make(stale).heartbeat("alpha", "i1", { active_tasks: 2 });
    expect(conflicts).toBe(1);
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ active_tasks: 2, last_heartbeat: t });
  });

  it("answers unknown_instance after the instance was deregistered", async () => {
    const reply = await registrar.deregisterInstance("alpha", "i1");
    expect(reply).toMatchObject({ agent_type: "alpha", instance_id: "i1", agent_removed: true });
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ kind: "gone", reason: "graceful", at: t });
    await catchUp(memory, view);
    expect((await rejection(registrar.heartbeat("alpha", "i1", {}))).code).toBe("unknown_instance");
    expect((await rejection(registrar.deregisterInstance("alpha", "i1"))).code).toBe("unknown_instance");
  });

  it("tells whether other instances remain", async () => {
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    await catchUp(memory, view);
    expect((await registrar.deregisterInstance("alpha", "i2")).agent_removed).toBe(false);
  });

  it("registers again over a tombstone", async () => {
    await registrar.deregisterInstance("alpha", "i1");
    await catchUp(memory, view);
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ kind: "instance" });
  });

  it("removes every instance of a type as an operator", async () => {
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    await catchUp(memory, view);
    const reply = await registrar.deregisterType("alpha");
    expect(reply).toMatchObject({ agent_type: "alpha", instance_id: null, agent_removed: true, instances: ["i1", "i2"] });
    expect(reply.revision).toBe(await memory.lastRevision());
    expect(await instanceRecord("alpha", "i2")).toMatchObject({ kind: "gone", reason: "operator" });
    expect((await rejection(registrar.deregisterType("nobody"))).code).toBe("not_found");
  });
});
