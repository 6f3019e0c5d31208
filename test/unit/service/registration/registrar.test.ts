import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryError, ShedError } from "../../../../src/domain/errors.js";
import { StoreConflictError, StoreUnavailableError, type Store, type StoreEntry, type StoreWatch } from "../../../../src/domain/ports.js";
import { agentKey, decodeAgentRecord, decodeInstanceRecord, encodeRecord, instanceKey, liveInstanceRecord } from "../../../../src/domain/model/records.js";
import { decodeClaim, subjectClaimKey } from "../../../../src/domain/model/subject-claims.js";
import { GRAPH_KEY, decodeGraphRecord } from "../../../../src/domain/graph/graph-guard.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { agentSpecSchema, INSTANCE_ID_RE } from "../../../../src/domain/spec/spec.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { MAX_WRITE_ATTEMPTS, Registrar, type RegistrarSettings } from "../../../../src/service/registration/registrar.js";
import { catchUp, registrarSettings, specBody } from "../../fixtures.js";
import { captureLogs } from "../../../harness/registry.js";

const settings: RegistrarSettings = registrarSettings();

const spec = specBody;

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


let t: number;
let memory: MemoryStore;
let store: FlakyStore;
let view: RegistryView;
let conflicts: number;
let registrar: Registrar;

const make = (v: RegistryView, s: Store = store) =>
  new Registrar({ store: s, view: v, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings, onConflict: () => conflicts++ });

async function instanceRecord(type: string, id: string) {
  const e = await memory.get(instanceKey(type, id));
  return e && e.operation === "PUT" ? decodeInstanceRecord(e.value) : null;
}

async function rejection(p: unknown): Promise<RegistryError> {
  const e = await Promise.resolve(p).then(() => null, (err: unknown) => err);
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

  it("refuses another spec under a stored version, writing nothing, and overwrites it with replace, logged", async () => {
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    await catchUp(memory, view);
    const writes = store.writes;
    const e = await rejection(registrar.register("alpha", { spec: spec("alpha", { description: "edited" }), instance_id: "i2" }));
    expect(e).toMatchObject({ code: "conflict", status: 409 });
    expect(e.message).toContain("differs in: description");
    expect(store.writes).toBe(writes);

    const { logger, lines } = captureLogs();
    const logged = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings, log: logger });
    await logged.register("alpha", { spec: spec("alpha", { description: "edited" }), instance_id: "i2", replace: true });
    expect(decodeAgentRecord((await memory.get(agentKey("alpha")))!.value)?.spec.description).toBe("edited");
    expect(await instanceRecord("alpha", "i2")).toMatchObject({ spec_changed: true, replaced: true });
    expect(lines.filter((l) => l.level === 40)).toMatchObject([{ agent_type: "alpha", version: "1.0.0", instance_id: "i2", msg: "spec of an existing version overwritten with replace" }]);
  });

  it("lets a registry-file entry change its spec under the same version", async () => {
    await registrar.register("alpha", { spec: spec("alpha") }, { static: true });
    await catchUp(memory, view);
    await registrar.register("alpha", { spec: spec("alpha", { description: "edited in the file" }) }, { static: true });
    expect(decodeAgentRecord((await memory.get(agentKey("alpha")))!.value)).toMatchObject({ static: true, spec: { description: "edited in the file" } });
    expect(await instanceRecord("alpha", "static")).toMatchObject({ replaced: true });
  });

  it("retries after a lost compare-and-set", async () => {
    store.failWrites = 1;
    const reply = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    expect(conflicts).toBe(1);
    // The lost claim write, then the claim, the agent and the instance.
    expect(store.writes).toBe(4);
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

  it("refuses a nats_subject claimed by another type, live or down", async () => {
    await registrar.register("alpha", { spec: spec("alpha", { nats_subject: "tasks.shared" }) });
    await catchUp(memory, view);
    const e = await rejection(registrar.register("beta", { spec: spec("beta", { nats_subject: "tasks.shared" }) }));
    expect(e.code).toBe("conflict");
    expect(e.message).toBe("nats_subject tasks.shared is already used by agent type alpha");
    // Down is not gone: the subject stays alpha's until the type is removed after retention.
    await registrar.deregisterType("alpha");
    await catchUp(memory, view);
    const squat = await rejection(registrar.register("beta", { spec: spec("beta", { nats_subject: "tasks.shared" }) }));
    expect(squat.code).toBe("conflict");
    expect(squat.message).toMatch(/already used by agent type alpha; it is kept for that type while it is down/);
    expect((await registrar.register("alpha", { spec: spec("alpha", { nats_subject: "tasks.shared" }) })).agent_type).toBe("alpha");
  });

  it("claims the subject in the store before writing the spec, and writes the claim only when the spec is written", async () => {
    const first = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    const claim = await memory.get(subjectClaimKey("tasks.alpha"));
    expect(claim?.revision).toBe(first.revision - 2);
    expect(decodeClaim(claim!.value)).toEqual({ kind: "subject_claim", subject: "tasks.alpha", agent_type: "alpha", tenant_scope: null, at: t });
    await catchUp(memory, view);
    store.writes = 0;
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    expect(store.writes).toBe(1);
    expect((await memory.get(subjectClaimKey("tasks.alpha")))?.revision).toBe(claim?.revision);
  });

  it("lets exactly one of two types racing for one subject through, whatever the views say", async () => {
    // Two replicas whose views know nothing yet: only the claim key can tell them apart.
    const results = await Promise.allSettled([
      make(new RegistryView()).register("alpha", { spec: spec("alpha", { nats_subject: "tasks.shared" }) }),
      make(new RegistryView()).register("beta", { spec: spec("beta", { nats_subject: "tasks.shared" }) }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected");
    expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: "conflict" });
    const agents = await Promise.all(["alpha", "beta"].map((type) => memory.get(agentKey(type))));
    expect(agents.filter((a) => a !== null)).toHaveLength(1);
  });

  it("moves its claim to a new subject and gives the old one back", async () => {
    await registrar.register("alpha", { spec: spec("alpha", { nats_subject: "tasks.old" }), instance_id: "i1" });
    await catchUp(memory, view);
    await registrar.register("alpha", { spec: spec("alpha", { version: "2.0.0", nats_subject: "tasks.new" }), instance_id: "i1" });
    expect((await memory.get(subjectClaimKey("tasks.old")))?.operation).toBe("DEL");
    expect(decodeClaim((await memory.get(subjectClaimKey("tasks.new")))!.value)?.agent_type).toBe("alpha");
    await catchUp(memory, view);
    expect((await registrar.register("beta", { spec: spec("beta", { nats_subject: "tasks.old" }) })).agent_type).toBe("beta");
  });

  it("keeps the old rule for a store written before claims: no other live type may use the subject", async () => {
    // alpha registered by an older registry: a spec and an instance, no claim.
    await memory.write(agentKey("alpha"), encodeRecord({ kind: "agent", spec: agentSpecSchema.parse(spec("alpha", { nats_subject: "tasks.shared" })), registered_at: t, updated_at: t }), 0);
    await memory.write(instanceKey("alpha", "i1"), encodeRecord(liveInstanceRecord({ version: "1.0.0", status: "ready", registered_at: t, last_heartbeat: t, heartbeat_interval_ms: 30_000, active_tasks: 0, metadata: {}, spec_changed: false })), 0);
    await catchUp(memory, view);
    expect((await rejection(registrar.register("beta", { spec: spec("beta", { nats_subject: "tasks.shared" }) }))).code).toBe("conflict");
    // alpha's next registration claims its subject.
    await registrar.register("alpha", { spec: spec("alpha", { nats_subject: "tasks.shared" }), instance_id: "i2" });
    expect(decodeClaim((await memory.get(subjectClaimKey("tasks.shared")))!.value)?.agent_type).toBe("alpha");
  });

  it("names another tenant's agent type in no conflict message", async () => {
    await registrar.register("acme-bot", { spec: spec("acme-bot", { nats_subject: "tasks.shared", tenant_scope: "acme" }) });
    await registrar.register("acme-caps", { spec: spec("acme-caps", { tenant_scope: "acme", capabilities: [{ name: "secret.plan", description: "", input_schema: {}, output_schema: {} }] }) });
    await catchUp(memory, view);
    const other = await rejection(registrar.register("globex-bot", { spec: spec("globex-bot", { nats_subject: "tasks.shared", tenant_scope: "globex" }) }));
    expect(other.message).toBe("nats_subject tasks.shared is already used by another agent type");
    const shared = await rejection(registrar.register("shared-bot", { spec: spec("shared-bot", { nats_subject: "tasks.shared" }) }));
    expect(shared.message).not.toContain("acme");
    const same = await rejection(registrar.register("acme-two", { spec: spec("acme-two", { nats_subject: "tasks.shared", tenant_scope: "acme" }) }));
    expect(same.message).toContain("agent type acme-bot");
    const strict = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: { ...settings, duplicateCapabilities: "reject" } });
    const dup = await rejection(strict.register("globex-caps", { spec: spec("globex-caps", { tenant_scope: "globex", capabilities: [{ name: "secret.plan", description: "", input_schema: {}, output_schema: {} }] }) }));
    expect(dup.message).toBe("capability secret.plan is already provided by another agent type (policy: reject duplicates)");
  });

  it("refuses a capability another live type provides under policy reject only", async () => {
    const caps = { capabilities: [{ name: "text.summarize", description: "", input_schema: {}, output_schema: {} }] };
    await registrar.register("alpha", { spec: spec("alpha", caps) });
    await catchUp(memory, view);
    const strict = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: { ...settings, duplicateCapabilities: "reject" } });
    const e = await rejection(strict.register("beta", { spec: spec("beta", caps) }));
    expect(e.code).toBe("conflict");
    expect(e.message).toContain("text.summarize");
    expect((await registrar.register("beta", { spec: spec("beta", caps) })).agent_type).toBe("beta");
  });

  it("under policy reject, checks capabilities against what the store holds, though the view has not applied the last write", async () => {
    const caps = { capabilities: [{ name: "text.summarize", description: "", input_schema: {}, output_schema: {} }] };
    const strict = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: { ...settings, duplicateCapabilities: "reject" }, catchUp: () => catchUp(memory, view) });
    await strict.register("alpha", { spec: spec("alpha", caps) });
    const e = await rejection(strict.register("beta", { spec: spec("beta", caps) }));
    expect(e.code).toBe("conflict");
    expect(await memory.get(agentKey("beta"))).toBeNull();
  });

  it("catches up once for all the checks that read other agent types", async () => {
    let catchUps = 0;
    const strict = new Registrar({
      store, view, checker: new InlineSchemaChecks(), clock: { now: () => t },
      settings: { ...settings, duplicateCapabilities: "reject", maxInstancesPerType: 1 },
      catchUp: () => (catchUps++, catchUp(memory, view)),
    });
    await strict.register("alpha", { spec: spec("alpha", { depends: [{ type: "agent", name: "beta", version: "1.0.0" }] }) });
    expect(catchUps).toBe(1);
  });

  it("checks dependencies against what the store holds, though the view has not applied the last write", async () => {
    // Replies come once a write is stored; the view applies it later (here: only when caught up).
    const behind = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings, catchUp: () => catchUp(memory, view) });
    const dep = (type: string) => ({ depends: [{ type: "agent", name: type, version: "1.0.0" }] });
    expect((await behind.register("alpha", { spec: spec("alpha", dep("beta")) })).warnings).toEqual(["depends.0: agent:beta@1.0.0 is missing"]);
    const e = await rejection(behind.register("beta", { spec: spec("beta", dep("alpha")) }));
    expect(e).toMatchObject({ code: "invalid_spec", status: 400 });
    expect(e.message).toContain("closes the dependency cycle beta -> alpha -> beta");
    expect(await memory.get(agentKey("beta"))).toBeNull();
  });

  it("re-reads the store when another replica wrote the agent record first", async () => {
    // A replica whose view lags plans a create of the agent record, loses, re-reads and succeeds.
    await make(new RegistryView()).register("alpha", { spec: spec("alpha"), instance_id: "i1" });
    const reply = await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    expect(conflicts).toBe(1);
    expect(await instanceRecord("alpha", reply.instance_id)).toMatchObject({ kind: "instance" });
  });
});

describe("Registrar.register: dependency cycles across replicas (the graph key)", () => {
  const dep = (type: string) => ({ depends: [{ type: "agent", name: type, version: "1.0.0" }] });

  /** A store that refuses writes to some keys: `conflict` (nothing written) or `unavailable` (outcome unknown). */
  class KeyedStore extends FlakyStore {
    readonly refuse = new Map<string, "conflict" | "unavailable">();
    readonly writesTo = new Map<string, number>();
    override async write(key: string, value: Uint8Array, expected: number): Promise<number> {
      this.writesTo.set(key, (this.writesTo.get(key) ?? 0) + 1);
      const how = this.refuse.get(key);
      if (how === "conflict") throw new StoreConflictError(key);
      if (how === "unavailable") throw new StoreUnavailableError("store away");
      return super.write(key, value, expected);
    }
  }

  /** A replica: its own view, fed from the store only when it catches up, as a lagging watch would. */
  const replica = (s: Store = store) => {
    const own = new RegistryView();
    return new Registrar({ store: s, view: own, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings, catchUp: () => catchUp(memory, own) });
  };

  async function graphIntents(): Promise<string[]> {
    const e = await memory.get(GRAPH_KEY);
    return e && e.operation === "PUT" ? decodeGraphRecord(e.value).intents.map((i) => i.agent_type) : [];
  }

  it("of the two halves of a cycle registered at once, on one replica or two, stores exactly one and refuses the other naming the cycle", async () => {
    for (const replicas of [1, 2]) {
      for (let round = 0; round < 10; round++) {
        const [a, b] = [`a${replicas}x${round}`, `b${replicas}x${round}`];
        const one = replica();
        const two = replicas === 1 ? one : replica();
        const outcomes = await Promise.allSettled([one.register(a, { spec: spec(a, dep(b)) }), two.register(b, { spec: spec(b, dep(a)) })]);
        const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as RegistryError] : []));
        expect(refused, `${replicas} replica(s), round ${round}`).toHaveLength(1);
        expect(refused[0]).toMatchObject({ code: "invalid_spec", issues: [{ path: "depends.0", message: expect.stringMatching(/^closes the dependency cycle /) }] });
        const stored = [await memory.get(agentKey(a)), await memory.get(agentKey(b))].filter((e) => e !== null);
        expect(stored).toHaveLength(1);
      }
    }
  });

  it("keeps writes that cannot add an edge off the graph key", async () => {
    const keyed = new KeyedStore(memory);
    const r = replica(keyed);
    await r.register("plain", { spec: spec("plain") });
    expect(keyed.writesTo.get(GRAPH_KEY)).toBeUndefined();
    await r.register("user", { spec: spec("user", dep("plain")), instance_id: "i1" });
    expect(keyed.writesTo.get(GRAPH_KEY)).toBe(1);
    // More instances of the stored spec, and a new version with the same dependencies: no turn.
    await r.register("user", { spec: spec("user", dep("plain")), instance_id: "i2" });
    await r.register("user", { spec: spec("user", { ...dep("plain"), version: "1.1.0" }), instance_id: "i3" });
    expect(keyed.writesTo.get(GRAPH_KEY)).toBe(1);
  });

  it("answers unavailable, writing no spec, when the view cannot reach the graph key's revision", async () => {
    await replica().register("alpha", { spec: spec("alpha", dep("beta")) });
    const behind = new Registrar({ store, view: new RegistryView(), checker: new InlineSchemaChecks(), clock: { now: () => t }, settings, viewAt: async () => false });
    expect(await rejection(behind.register("gamma", { spec: spec("gamma", dep("alpha")) }))).toMatchObject({ code: "unavailable", status: 503 });
    expect(await memory.get(agentKey("gamma"))).toBeNull();
  });

  it("withdraws the intent of a registration whose spec write surely did not land, and keeps one whose outcome is unknown", async () => {
    const keyed = new KeyedStore(memory);
    keyed.refuse.set(agentKey("alpha"), "conflict");
    expect(await rejection(replica(keyed).register("alpha", { spec: spec("alpha", dep("beta")) }))).toMatchObject({ code: "conflict" });
    expect(await graphIntents()).toEqual([]);
    // Else beta would be refused for a cycle through a spec that was never stored.
    expect((await replica().register("beta", { spec: spec("beta", dep("alpha")) })).warnings).toEqual(["depends.0: agent:alpha@1.0.0 is missing"]);

    keyed.refuse.set(agentKey("gamma"), "unavailable");
    expect(await rejection(replica(keyed).register("gamma", { spec: spec("gamma", dep("delta")) }))).toMatchObject({ code: "unavailable" });
    expect(await graphIntents()).toEqual(["gamma"]);
    // Its write may still land: a cycle through it is refused until the view shows its key moved.
    const e = await rejection(replica().register("delta", { spec: spec("delta", dep("gamma")) }));
    expect(e.message).toContain("closes the dependency cycle delta -> gamma -> delta");
    keyed.refuse.delete(agentKey("gamma"));
    await replica(keyed).register("gamma", { spec: spec("gamma") });
    expect(await graphIntents()).toEqual(["gamma"]);
    expect((await replica().register("delta", { spec: spec("delta", dep("gamma")) })).warnings).toEqual([]);
    expect(await graphIntents()).toEqual(["delta"]);
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
    // The reply carries the stamp it stored, on the registry's clock.
    expect(r).toEqual({ status: "draining", revision: await memory.lastRevision(), last_heartbeat: new Date(t).toISOString() });
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

  it("refuses a heartbeat past REGISTRY_MAX_HEARTBEAT_WRITES at once, as shed, and tells the evictor a heartbeat was lost", async () => {
    for (const id of ["i2", "i3"]) await registrar.register("alpha", { spec: spec("alpha"), instance_id: id });
    await catchUp(memory, view);
    // A store whose writes hang while `hold` is on, as a saturated JetStream's do until they time out.
    const hung: Array<() => void> = [];
    let hold = true;
    const slow = new FlakyStore(memory);
    slow.write = (key, value, expected) =>
      hold ? new Promise<number>((resolve, reject) => hung.push(() => memory.write(key, value, expected).then(resolve, reject))) : memory.write(key, value, expected);
    let lost = 0;
    const bounded = new Registrar({ store: slow, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: { ...settings, maxHeartbeatWrites: 2 }, onUnavailable: () => lost++ });
    const first = bounded.heartbeat("alpha", "i1", {});
    const second = bounded.heartbeat("alpha", "i2", {});
    expect(hung).toHaveLength(2);
    let refusal: unknown = null;
    try {
      void bounded.heartbeat("alpha", "i3", {});
    } catch (e) {
      refusal = e;
    }
    // Thrown, not a promise: refusing costs no store call, timer or promise.
    expect(refusal).toBeInstanceOf(ShedError);
    expect(refusal).toMatchObject({ code: "unavailable", status: 503 });
    expect((refusal as Error).message).toMatch(/2 heartbeat writes are already waiting .*REGISTRY_MAX_HEARTBEAT_WRITES.*retry/);
    expect(lost).toBe(1);
    expect(hung).toHaveLength(2);
    // A heartbeat of an instance already being written joins that write instead.
    const joined = bounded.heartbeat("alpha", "i1", { active_tasks: 4 });
    hold = false;
    for (const release of hung.splice(0)) release();
    expect((await first).status).toBe("ready");
    expect((await second).status).toBe("ready");
    expect((await joined).status).toBe("ready");
    expect(await instanceRecord("alpha", "i1")).toMatchObject({ active_tasks: 4 });
    // Room again: the refused instance's next heartbeat is written.
    t += 1000;
    expect((await bounded.heartbeat("alpha", "i3", {})).status).toBe("ready");
    expect(await instanceRecord("alpha", "i3")).toMatchObject({ last_heartbeat: t });
    expect(lost).toBe(1);
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

  it("does not say the type is gone while its view lags a registration already answered", async () => {
    await catchUp(memory, view);
    await registrar.register("alpha", { spec: spec("alpha"), instance_id: "i2" });
    let caughtUp = 0;
    const r = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings, catchUp: async () => { caughtUp++; await catchUp(memory, view); } });
    expect((await r.deregisterInstance("alpha", "i1")).agent_removed).toBe(false);
    expect(caughtUp).toBe(1);
    // With another live instance in the view, no wait.
    await r.register("alpha", { spec: spec("alpha"), instance_id: "i3" });
    await catchUp(memory, view);
    expect((await r.deregisterInstance("alpha", "i2")).agent_removed).toBe(false);
    expect(caughtUp).toBe(1);
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
