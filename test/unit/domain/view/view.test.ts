import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { eventId, storeEventToCloudEvent, type StoreEvent } from "../../../../src/domain/view/events.js";
import { aggregateStatus, STATIC_INSTANCE_ID, type InstanceState, type InstanceStatus } from "../../../../src/domain/model/model.js";
import { agentKey, encodeRecord, instanceKey } from "../../../../src/domain/model/records.js";
import type { StoreEntry } from "../../../../src/domain/ports.js";
import { LIVE, agentPut, del, gonePut, instPut, put } from "../../store-entries.js";
import { agentSpecSchema, type AgentSpec } from "../../../../src/domain/spec/spec.js";
import { RegistryView } from "../../../../src/domain/view/view.js";

function makeSpec(type: string, caps: string[] = [`${type}.run`], extra: Record<string, unknown> = {}): AgentSpec {
  return agentSpecSchema.parse({
    agent_type: type,
    version: "1.0.0",
    description: `${type} agent`,
    owner_team: "team",
    capabilities: caps.map((name) => ({ name, description: name, input_schema: {}, output_schema: {} })),
    nats_subject: `tasks.${type}`,
    consumer_group: type,
    ...extra,
  });
}

const types = (events: readonly StoreEvent[]): string[] => events.map((e) => e.type);
const capEvents = (events: readonly StoreEvent[]) =>
  events.flatMap((e) => (e.type === "registry.capability.changed" ? [{ name: e.subject, ...e.data }] : []));

describe("RegistryView.apply: agent lifecycle events", () => {
  it("emits registered with first_instance and spec_changed from the record", () => {
    const view = new RegistryView();
    expect(view.apply(agentPut(1, makeSpec("alpha")))).toEqual([]);
    const first = view.apply(instPut(2, "alpha", "i1", { spec_changed: true }));
    expect(first[0]).toMatchObject({
      type: "registry.agent.registered",
      subject: "alpha",
      revision: 2,
      index: 0,
      time: 2000,
      data: { agent_type: "alpha", version: "1.0.0", instance_id: "i1", tenant_scope: null, first_instance: true, spec_changed: true, revision: 2 },
    });
    const second = view.apply(instPut(3, "alpha", "i2"));
    expect(second).toHaveLength(1);
    expect(second[0]?.data).toMatchObject({ instance_id: "i2", first_instance: false, spec_changed: false, replaced: false });
    expect(view.get("alpha")?.instances.size).toBe(2);
  });

  it("emits registered again for a live instance whose registration replaced its version's spec", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1", { spec_changed: true }));
    expect(view.apply(instPut(3, "alpha", "i1"))).toEqual([]);
    view.apply(agentPut(4, makeSpec("alpha", ["alpha.run"], { description: "replaced" })));
    const events = view.apply(instPut(5, "alpha", "i1", { spec_changed: true, replaced: true, status: "registered" }));
    expect(types(events)).toEqual(["registry.agent.registered", "registry.agent.status_changed", "registry.capability.changed"]);
    expect(events[0]?.data).toMatchObject({ instance_id: "i1", first_instance: false, spec_changed: true, replaced: true });
    // The heartbeat after it writes the record without the flag: nothing more.
    expect(view.apply(instPut(6, "alpha", "i1", { status: "registered" }))).toEqual([]);
  });

  it("emits status_changed when an instance changes status, nothing for plain heartbeats", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    view.apply(instPut(3, "alpha", "i2"));
    expect(view.apply(instPut(4, "alpha", "i1", { last_heartbeat: 5000, active_tasks: 3 }))).toEqual([]);
    expect(view.instance("alpha", "i1")).toMatchObject({ last_heartbeat: 5000, active_tasks: 3, revision: 4 });
    const events = view.apply(instPut(5, "alpha", "i1", { status: "draining" }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "registry.agent.status_changed",
      data: { agent_type: "alpha", instance_id: "i1", from: "ready", to: "draining", revision: 5 },
    });
    expect(view.revision).toBe(5);
  });

  it("emits deregistered with the tombstone's reason and agent_removed for the last instance", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    view.apply(instPut(3, "alpha", "i2", { last_heartbeat: 2500 }));
    const graceful = view.apply(gonePut(4, "alpha", "i1", "graceful", 4000));
    expect(graceful[0]).toMatchObject({
      type: "registry.agent.deregistered",
      data: { instance_id: "i1", reason: "graceful", agent_removed: false, last_heartbeat: new Date(100).toISOString(), revision: 4 },
    });
    const evicted = view.apply(gonePut(5, "alpha", "i2", "evicted", 6000));
    expect(evicted[0]?.data).toMatchObject({ instance_id: "i2", reason: "evicted", agent_removed: true, last_heartbeat: new Date(2500).toISOString() });
    expect(view.get("alpha")?.status).toBe("deregistered");
    expect([...view.tombstones("alpha").keys()].sort()).toEqual(["i1", "i2"]);
    // A tombstone of an instance the view never saw live yields nothing.
    expect(view.apply(gonePut(6, "alpha", "ghost", "evicted", 7000))).toEqual([]);
  });

  it("treats a DEL of a live instance key as an operator removal", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    const events = view.apply(del(instanceKey("alpha", "i1"), 3));
    expect(events[0]).toMatchObject({ type: "registry.agent.deregistered", data: { reason: "operator", agent_removed: true, revision: 3 } });
    expect(view.instance("alpha", "i1")).toBeUndefined();
    expect(view.tombstones("alpha").size).toBe(0);
  });

  it("sets deregistered_at to the latest tombstone and clears it when an instance returns", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha"), { updated_at: 50 }));
    expect(view.get("alpha")?.deregistered_at).toBe(50);
    view.apply(instPut(2, "alpha", "i1"));
    view.apply(instPut(3, "alpha", "i2"));
    expect(view.get("alpha")?.deregistered_at).toBeNull();
    view.apply(gonePut(4, "alpha", "i1", "graceful", 9000));
    expect(view.get("alpha")?.deregistered_at).toBeNull();
    view.apply(gonePut(5, "alpha", "i2", "evicted", 7000));
    expect(view.get("alpha")?.deregistered_at).toBe(9000);
    view.apply(instPut(6, "alpha", "i1"));
    expect(view.get("alpha")).toMatchObject({ status: "ready", deregistered_at: null });
    expect(view.tombstones("alpha").has("i1")).toBe(false);
  });
});

describe("RegistryView.apply: capability.changed", () => {
  it("is added when the first ready provider appears and removed when it goes", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha", ["b.cap", "a.cap"])));
    const events = view.apply(instPut(2, "alpha", "i1"));
    expect(types(events)).toEqual(["registry.agent.registered", "registry.capability.changed", "registry.capability.changed"]);
    expect(capEvents(events)).toEqual([
      { name: "a.cap", capability: "a.cap", change: "added", providers: ["alpha"], revision: 2 },
      { name: "b.cap", capability: "b.cap", change: "added", providers: ["alpha"], revision: 2 },
    ]);
    expect(events.map((e) => eventId(e.revision, e.index))).toEqual(["2-0", "2-1", "2-2"]);
    const gone = view.apply(gonePut(3, "alpha", "i1", "graceful", 3000));
    expect(capEvents(gone).map((e) => [e.name, e.change, e.providers])).toEqual([
      ["a.cap", "removed", []],
      ["b.cap", "removed", []],
    ]);
  });

  it("says nothing while an agent is not ready, and added once it becomes ready", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    expect(types(view.apply(instPut(2, "alpha", "i1", { status: "registered" })))).toEqual(["registry.agent.registered"]);
    const events = view.apply(instPut(3, "alpha", "i1", { status: "ready" }));
    expect(types(events)).toEqual(["registry.agent.status_changed", "registry.capability.changed"]);
    expect(capEvents(events)[0]).toMatchObject({ change: "added" });
  });

  it("is updated when a ready agent changes a schema, added/removed for capabilities it gains or drops", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha", ["x.keep", "x.drop"])));
    view.apply(instPut(2, "alpha", "i1"));
    const changed = makeSpec("alpha", ["x.keep", "x.new"], { version: "1.1.0" });
    const withSchema = { ...changed, capabilities: changed.capabilities.map((c) => (c.name === "x.keep" ? { ...c, input_schema: { type: "object" } } : c)) };
    const events = view.apply(agentPut(3, withSchema as AgentSpec));
    expect(capEvents(events).map((e) => [e.name, e.change])).toEqual([
      ["x.drop", "removed"],
      ["x.keep", "updated"],
      ["x.new", "added"],
    ]);
    expect([...view.providersOf("x.drop")]).toEqual([]);
    expect([...view.providersOf("x.new")]).toEqual(["alpha"]);
    // The same spec written again changes nothing a coordinator sees.
    expect(view.apply(agentPut(4, withSchema as AgentSpec, { updated_at: 99 }))).toEqual([]);
  });

  it("is updated when a second provider appears or one of two goes", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha", ["shared.cap"])));
    view.apply(instPut(2, "alpha", "i1"));
    view.apply(agentPut(3, makeSpec("beta", ["shared.cap"])));
    const joined = capEvents(view.apply(instPut(4, "beta", "j1")));
    expect(joined).toEqual([{ name: "shared.cap", capability: "shared.cap", change: "updated", providers: ["alpha", "beta"], revision: 4 }]);
    const left = capEvents(view.apply(del(instanceKey("alpha", "i1"), 5)));
    expect(left).toEqual([{ name: "shared.cap", capability: "shared.cap", change: "updated", providers: ["beta"], revision: 5 }]);
    expect([...view.providersOf("shared.cap")].sort()).toEqual(["alpha", "beta"]);
    expect(view.readyProviders("shared.cap")).toEqual(["beta"]);
  });

  it("is removed when the agent record of a ready agent is deleted", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    const events = view.apply(del(agentKey("alpha"), 3));
    expect(capEvents(events)).toEqual([{ name: "alpha.run", capability: "alpha.run", change: "removed", providers: [], revision: 3 }]);
    expect(view.get("alpha")).toBeUndefined();
    expect([...view.capabilityNames()]).toEqual([]);
  });
});

describe("RegistryView.apply: order and idempotence", () => {
  it("ignores entries at or below the last applied revision", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(5, "alpha", "i1"));
    expect(view.apply(instPut(5, "alpha", "i1", { status: "draining" }))).toEqual([]);
    expect(view.apply(gonePut(3, "alpha", "i1", "evicted", 1))).toEqual([]);
    expect(view.instance("alpha", "i1")?.status).toBe("ready");
    expect(view.revision).toBe(5);
  });

  it("keeps instances that arrive before their agent record and attaches them when it comes", () => {
    const view = new RegistryView();
    expect(view.apply(instPut(3, "alpha", "i1"))).toEqual([]);
    expect(view.apply(gonePut(4, "alpha", "i0", "graceful", 500))).toEqual([]);
    expect(view.get("alpha")).toBeUndefined();
    expect(view.instance("alpha", "i1")?.revision).toBe(3);
    expect([...view.orphanTombstoneTypes()]).toEqual(["alpha"]);
    const events = view.apply(agentPut(5, makeSpec("alpha")));
    expect(capEvents(events).map((e) => e.change)).toEqual(["added"]);
    expect(view.get("alpha")).toMatchObject({ status: "ready", revision: 5 });
    expect([...(view.get("alpha")?.instances.keys() ?? [])]).toEqual(["i1"]);
    expect(view.tombstones("alpha").get("i0")).toMatchObject({ reason: "graceful", at: 500, revision: 4 });
    expect([...view.orphanTombstoneTypes()]).toEqual([]);
  });

  it("counts records it cannot decode and changes nothing for them", () => {
    const view = new RegistryView();
    expect(view.apply(put(agentKey("alpha"), 1, new TextEncoder().encode("not json")))).toEqual([]);
    expect(view.apply(put(instanceKey("alpha", "i"), 2, new TextEncoder().encode('{"kind":"x"}')))).toEqual([]);
    expect(view.unreadable).toBe(2);
    expect(view.size).toBe(0);
    expect(view.revision).toBe(2);
  });

  it("reads an unreadable record as an absent key: the agent leaves, its instances wait as orphans, listeners are told once each", () => {
    const view = new RegistryView();
    const told: string[] = [];
    view.onUnreadable((key, revision, problem) => told.push(`${key}@${revision}: ${problem}`));
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    const garbled = put(agentKey("alpha"), 3, new TextEncoder().encode('{"kind":"agent","spec":{"capabilities":"abc"},"registered_at":1,"updated_at":1}'));
    expect(capEvents(view.apply(garbled)).map((e) => `${e.name} ${e.change}`)).toEqual(["alpha.run removed"]);
    expect(view.get("alpha")).toBeUndefined();
    expect(view.providersOf("alpha.run").size).toBe(0);
    expect(view.instance("alpha", "i1")?.revision).toBe(2);
    // Nothing it skipped reaches the schema sharing, whose timer used to throw on it.
    expect(() => view.shareSchemas(100)).not.toThrow();
    // A readable record back: the instance is there again.
    view.apply(agentPut(4, makeSpec("alpha")));
    expect(view.get("alpha")).toMatchObject({ status: "ready" });
    expect(types(view.apply(put(instanceKey("alpha", "i1"), 5, new TextEncoder().encode('{"kind":"instance"}'))))).toEqual(["registry.agent.deregistered", "registry.capability.changed"]);
    expect(view.get("alpha")?.instances.size).toBe(0);
    expect(told).toEqual(["agents.alpha@3: spec.agent_type: not a string", "instances.alpha.i1@5: version: not a string"]);
    expect(view.unreadable).toBe(2);
  });

  it("counts keys that are not the registry's and leaves nothing behind for unknown agent types", () => {
    const view = new RegistryView();
    const value = encodeRecord({ ...LIVE });
    for (const [i, key] of ["instances.UPPER.i", "instances.a.b.c", "agents.-x", "other.key"].entries()) expect(view.apply(put(key, i + 1, value))).toEqual([]);
    expect(view.apply(put(instanceKey("beta", "i"), 5, new TextEncoder().encode("[]")))).toEqual([]);
    expect(view.apply(del(instanceKey("gamma", "i"), 6))).toEqual([]);
    expect(view.unreadable).toBe(5);
    expect(view.instance("beta", "i")).toBeUndefined();
    expect([...view.orphanTombstoneTypes()]).toEqual([]);
  });

  it("gives cloud events the id revision-index", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    const [registered] = view.apply(instPut(7, "alpha", "i1"));
    const ce = storeEventToCloudEvent(registered!);
    expect(ce).toMatchObject({ id: "7-0", specversion: "1.0", source: "agent-registry", subject: "alpha", time: new Date(7000).toISOString() });
  });
});

describe("aggregate status", () => {
  const inst = (status: InstanceStatus) => ({ ...({} as InstanceState), instance_id: status, status });
  it("prefers ready over draining over registered; none is deregistered", () => {
    expect(aggregateStatus([])).toBe("deregistered");
    expect(aggregateStatus([inst("registered")])).toBe("registered");
    expect(aggregateStatus([inst("registered"), inst("draining")])).toBe("draining");
    expect(aggregateStatus([inst("draining"), inst("registered")])).toBe("draining");
    expect(aggregateStatus([inst("registered"), inst("draining"), inst("ready")])).toBe("ready");
  });

  it("is what the view shows as instances change", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    const steps: Array<[StoreEntry, string]> = [
      [instPut(2, "alpha", "a", { status: "registered" }), "registered"],
      [instPut(3, "alpha", "b", { status: "draining" }), "draining"],
      [instPut(4, "alpha", "c", { status: "ready" }), "ready"],
      [del(instanceKey("alpha", "c"), 5), "draining"],
    ];
    for (const [entry, status] of steps) {
      view.apply(entry);
      expect(view.get("alpha")?.status).toBe(status);
    }
  });
});

describe("RegistryView.current and listeners", () => {
  it("reconstructs the stored records and revisions", () => {
    const view = new RegistryView();
    const spec = makeSpec("alpha");
    view.apply(agentPut(1, spec, { registered_at: 5, updated_at: 6, static: true }));
    view.apply(instPut(2, "alpha", "i1", { active_tasks: 2, metadata: { zone: "a" }, spec_changed: true }));
    view.apply(gonePut(3, "alpha", "i2", "evicted", 777));
    const agent = { record: { kind: "agent", spec, registered_at: 5, updated_at: 6, static: true }, revision: 1 };
    expect(view.current("alpha", null)).toEqual({ agent, instance: null });
    expect(view.current("alpha", "i1")).toEqual({
      agent,
      instance: {
        record: { ...LIVE, active_tasks: 2, metadata: { zone: "a" }, spec_changed: false },
        revision: 2,
      },
    });
    expect(view.current("alpha", "i2").instance).toMatchObject({ record: { kind: "gone", reason: "evicted", at: 777 }, revision: 3 });
    expect(view.current("alpha", "nope").instance).toBeNull();
    expect(view.current("nobody", "i1")).toEqual({ agent: null, instance: null });
    expect(view.isStatic("alpha")).toBe(true);
  });

  it("tells listeners of every change but plain heartbeats", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    const seen: Array<[string, string | undefined]> = [];
    view.addListener({ update: (t, a) => seen.push([t, a?.status]) });
    expect(seen).toEqual([["alpha", "deregistered"]]);
    view.apply(instPut(2, "alpha", "i1"));
    view.apply(instPut(3, "alpha", "i1", { last_heartbeat: 999 }));
    view.apply(del(agentKey("alpha"), 4));
    expect(seen).toEqual([["alpha", "deregistered"], ["alpha", "ready"], ["alpha", undefined]]);
  });

  it("indexes agent types by nats_subject and forgets everything on clear()", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha", undefined, { nats_subject: "tasks.shared" })));
    view.apply(agentPut(2, makeSpec("beta", undefined, { nats_subject: "tasks.shared" })));
    view.apply(instPut(3, "alpha", "i1"));
    expect([...view.consumersOf("tasks.shared")].sort()).toEqual(["alpha", "beta"]);
    view.apply(agentPut(4, makeSpec("beta", undefined, { nats_subject: "tasks.beta" })));
    expect([...view.consumersOf("tasks.shared")]).toEqual(["alpha"]);
    const left: string[] = [];
    view.addListener({ update: (t, a) => void (a === undefined && left.push(t)) });
    view.clear();
    expect(left.sort()).toEqual(["alpha", "beta"]);
    expect({ size: view.size, revision: view.revision, caps: [...view.capabilityNames()] }).toEqual({ size: 0, revision: 0, caps: [] });
    expect([...view.consumersOf("tasks.beta")]).toEqual([]);
    expect(view.instance("alpha", "i1")).toBeUndefined();
    // Applying the same entries again rebuilds the same state.
    view.apply(agentPut(1, makeSpec("alpha")));
    expect(capEvents(view.apply(instPut(3, "alpha", "i1"))).map((e) => e.change)).toEqual(["added"]);
  });
});


describe("RegistryView: when this replica heard each instance (observed_at), on its own clock", () => {
  it("stamps every register or heartbeat applied with its clock, whatever the record's last_heartbeat says", () => {
    let t = 50_000;
    const view = new RegistryView({ now: () => t });
    view.apply(agentPut(1, makeSpec("alpha")));
    // Stamped by a replica a minute behind, then by one a minute ahead.
    view.apply(instPut(2, "alpha", "i1", { last_heartbeat: t - 60_000 }));
    expect(view.instance("alpha", "i1")).toMatchObject({ last_heartbeat: -10_000, observed_at: 50_000 });
    t = 51_000;
    view.apply(instPut(3, "alpha", "i1", { last_heartbeat: t + 60_000 }));
    expect(view.instance("alpha", "i1")).toMatchObject({ last_heartbeat: 111_000, observed_at: 51_000 });
    expect(view.takeInstanceChanges()).toEqual({ minObservedAt: 50_000, minIntervalMs: 1000, instances: null });
  });

  it("does not hear an entry it already applied again (a resumed watch overlaps)", () => {
    let t = 1000;
    const view = new RegistryView({ now: () => t });
    view.apply(agentPut(1, makeSpec("alpha")));
    const beat = instPut(2, "alpha", "i1");
    view.apply(beat);
    view.takeInstanceChanges();
    t = 9000;
    view.apply(beat);
    expect(view.instance("alpha", "i1")?.observed_at).toBe(1000);
    expect(view.takeInstanceChanges()).toBeNull();
  });

  it("reports orphans adopted by their agent record with the time they were heard", () => {
    let t = 1000;
    const view = new RegistryView({ now: () => t });
    view.apply(instPut(1, "alpha", "i1"));
    view.takeInstanceChanges();
    t = 5000;
    view.apply(agentPut(2, makeSpec("alpha")));
    expect(view.instance("alpha", "i1")?.observed_at).toBe(1000);
    expect(view.takeInstanceChanges()).toEqual({ minObservedAt: 1000, minIntervalMs: 1000, instances: null });
  });

  it("lists the instances written when tracking, up to its limit (past it: null, look at them all)", () => {
    const view = new RegistryView({ now: () => 1000 });
    view.trackInstanceChanges(2);
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    view.apply(instPut(3, "alpha", "i1"));
    expect(view.takeInstanceChanges()?.instances).toEqual([view.instance("alpha", "i1"), view.instance("alpha", "i1")]);
    expect(view.takeInstanceChanges()).toBeNull();
    for (let k = 0; k < 3; k++) view.apply(instPut(4 + k, "alpha", `j${k}`));
    expect(view.takeInstanceChanges()?.instances).toBeNull();
    view.apply(instPut(7, "alpha", "j0"));
    expect(view.takeInstanceChanges()?.instances).toEqual([view.instance("alpha", "j0")]);
  });
});

const FLEET_STATUSES: InstanceStatus[] = ["registered", "ready", "draining"];
// Any order of agent records, instance writes, tombstones, deletes and clears: instances of
// an agent type whose record is unknown (orphans) count only once the record arrives.
const fleetEntry = fc.oneof(
  fc.record({ kind: fc.constant("agent" as const), type: fc.constantFrom("a", "b", "c") }),
  fc.record({ kind: fc.constant("agent-del" as const), type: fc.constantFrom("a", "b", "c") }),
  fc.record({ kind: fc.constant("instance" as const), type: fc.constantFrom("a", "b", "c"), id: fc.constantFrom("i1", "i2", STATIC_INSTANCE_ID), status: fc.constantFrom(...FLEET_STATUSES) }),
  fc.record({ kind: fc.constant("gone" as const), type: fc.constantFrom("a", "b", "c"), id: fc.constantFrom("i1", "i2", STATIC_INSTANCE_ID) }),
  fc.record({ kind: fc.constant("instance-del" as const), type: fc.constantFrom("a", "b", "c"), id: fc.constantFrom("i1", "i2", STATIC_INSTANCE_ID) }),
  fc.record({ kind: fc.constant("clear" as const) }),
);
type FleetEntry = typeof fleetEntry extends fc.Arbitrary<infer E> ? E : never;

/** Applies one drawn entry at revision `rev`; returns the next revision (clear() starts the count again). */
function applyFleetEntry(view: RegistryView, o: FleetEntry, rev: number): number {
  if (o.kind === "agent") view.apply(agentPut(rev, makeSpec(o.type)));
  else if (o.kind === "agent-del") view.apply(del(agentKey(o.type), rev));
  else if (o.kind === "instance") view.apply(instPut(rev, o.type, o.id, { status: o.status }));
  else if (o.kind === "gone") view.apply(gonePut(rev, o.type, o.id, "evicted", rev));
  else if (o.kind === "instance-del") view.apply(del(instanceKey(o.type, o.id), rev));
  else {
    view.clear();
    return 1;
  }
  return rev + 1;
}

/** Runs `check` on the view after each entry of any drawn sequence. */
function afterEveryFleetEntry(check: (view: RegistryView) => void): void {
  fc.assert(
    fc.property(fc.array(fleetEntry, { maxLength: 60 }), (ops) => {
      const view = new RegistryView();
      let rev = 1;
      for (const o of ops) {
        rev = applyFleetEntry(view, o, rev);
        check(view);
      }
    }),
  );
}

describe("RegistryView.instanceCount: the tally the fleet gauges and self-preservation read", () => {
  const countByPass = (view: RegistryView, status: InstanceStatus, expiringOnly = false): number => {
    let n = 0;
    for (const a of view.all()) for (const i of a.instances.values()) if (i.status === status && !(expiringOnly && i.instance_id === STATIC_INSTANCE_ID)) n++;
    return n;
  };
  it("equals a count over every live instance after any sequence of entries", () => {
    afterEveryFleetEntry((view) => {
      for (const s of FLEET_STATUSES) expect(view.instanceCount(s)).toBe(countByPass(view, s));
      expect(view.expiringInstanceCount()).toBe(FLEET_STATUSES.reduce((n, s) => n + countByPass(view, s, true), 0));
    });
  });

  it("counts a status change once and a departure once", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1", { status: "registered" }));
    view.apply(instPut(3, "alpha", "i1", { status: "ready" }));
    view.apply(instPut(4, "alpha", "i1", { status: "ready" }));
    expect([view.instanceCount("registered"), view.instanceCount("ready")]).toEqual([0, 1]);
    view.apply(gonePut(5, "alpha", "i1", "evicted", 5000));
    view.apply(del(instanceKey("alpha", "i1"), 6));
    expect(view.instanceCount("ready")).toBe(0);
  });
});

describe("RegistryView.retentionCandidates: what the retention sweep looks at", () => {
  it("is exactly the agent types with tombstones or deregistered, after any sequence of entries", () => {
    afterEveryFleetEntry((view) => {
      const expected = new Set<string>(view.orphanTombstoneTypes());
      for (const a of view.all()) if (a.status === "deregistered" || view.tombstones(a.agent_type).size > 0) expected.add(a.agent_type);
      expect(new Set(view.retentionCandidates())).toEqual(expected);
    });
  });

  it("drops a type once its last tombstone is gone and it is live again", () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec("alpha")));
    view.apply(instPut(2, "alpha", "i1"));
    expect([...view.retentionCandidates()]).toEqual([]);
    view.apply(gonePut(3, "alpha", "i1", "evicted", 3000));
    expect([...view.retentionCandidates()]).toEqual(["alpha"]);
    view.apply(instPut(4, "alpha", "i2"));
    view.apply(del(instanceKey("alpha", "i1"), 5));
    expect([...view.retentionCandidates()]).toEqual([]);
  });
});

describe("RegistryView quiet load (a replica's initial load)", () => {
  const TYPES = ["alpha", "beta", "gamma"];
  const STATUSES = ["ready", "busy", "draining", "unhealthy"] as const;
  /** One store write of the small fleet the property below draws from. */
  const write = fc.oneof(
    fc.record({ kind: fc.constant("agent" as const), type: fc.constantFrom(...TYPES), caps: fc.subarray(["x.run", "y.run", "z.run"], { minLength: 1 }) }),
    fc.record({ kind: fc.constant("instance" as const), type: fc.constantFrom(...TYPES), id: fc.constantFrom("i1", "i2", STATIC_INSTANCE_ID), status: fc.constantFrom(...STATUSES) }),
    fc.record({ kind: fc.constant("gone" as const), type: fc.constantFrom(...TYPES), id: fc.constantFrom("i1", "i2", "i3") }),
    fc.record({ kind: fc.constant("delete" as const), type: fc.constantFrom(...TYPES), id: fc.option(fc.constantFrom("i1", "i2"), { nil: undefined }) }),
  );
  type Write = typeof write extends fc.Arbitrary<infer W> ? W : never;
  const entryOf = (w: Write, rev: number): StoreEntry => {
    if (w.kind === "agent") return agentPut(rev, makeSpec(w.type, w.caps));
    if (w.kind === "instance") return instPut(rev, w.type, w.id, { status: w.status as InstanceStatus });
    if (w.kind === "gone") return gonePut(rev, w.type, w.id, "evicted", rev);
    return del(w.id === undefined ? agentKey(w.type) : instanceKey(w.type, w.id), rev);
  };
  /** What a query could read: each type's status and instances, the ready providers, and what a listener was last told. */
  const snapshot = (view: RegistryView, told: Map<string, string | undefined>) => ({
    agents: TYPES.map((t) => {
      const a = view.get(t);
      return a && { status: a.status, instances: [...a.instances.values()].map((i) => `${i.instance_id}:${i.status}`).sort(), deregistered_at: a.deregistered_at };
    }),
    ready: ["x.run", "y.run", "z.run"].map((c) => view.readyProviders(c)),
    told: TYPES.map((t) => told.get(t)),
    revision: view.revision,
  });
  const listened = (view: RegistryView) => {
    const told = new Map<string, string | undefined>();
    view.addListener({ update: (t, a) => void told.set(t, a?.status) });
    return told;
  };

  it("ends in the state, listener updates and later events that applying entry by entry gives", () => {
    fc.assert(
      fc.property(fc.array(write, { maxLength: 40 }), write, (history, next) => {
        const entries = history.map((w, i) => entryOf(w, i + 1));
        const clock = { now: () => 0 };
        const plain = new RegistryView(clock);
        const quiet = new RegistryView(clock);
        const plainTold = listened(plain);
        const quietTold = listened(quiet);
        for (const e of entries) plain.apply(e);
        quiet.beginQuietLoad();
        for (const e of entries) expect(quiet.apply(e)).toEqual([]);
        quiet.endQuietLoad();
        expect(snapshot(quiet, quietTold)).toEqual(snapshot(plain, plainTold));
        // After the load, the next write derives the same events from either.
        const after = entryOf(next, entries.length + 1);
        expect(quiet.apply(after)).toEqual(plain.apply(after));
      }),
      { numRuns: 300 },
    );
  });

  it("tells each touched agent type's listeners once, at the end, with its final state", () => {
    const view = new RegistryView();
    const seen: Array<[string, string | undefined]> = [];
    view.addListener({ update: (t, a) => seen.push([t, a?.status]) });
    view.beginQuietLoad();
    view.apply(agentPut(1, makeSpec("alpha")));
    for (let i = 0; i < 10; i++) view.apply(instPut(2 + i, "alpha", `i${i}`, { status: i === 9 ? "draining" : "ready" }));
    view.apply(agentPut(20, makeSpec("beta")));
    view.apply(del(agentKey("beta"), 21));
    expect(seen).toEqual([]);
    view.endQuietLoad();
    expect(seen.sort()).toEqual([["alpha", "ready"], ["beta", undefined]]);
    expect(view.get("alpha")?.instances.size).toBe(10);
    // Ending again, or without a load, changes nothing.
    view.endQuietLoad();
    expect(seen).toHaveLength(2);
  });
});
