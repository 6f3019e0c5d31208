/**
 * The approval gate (docs/trust.md, "The approval gate") through the registrar, the view, the
 * queries and the operator's Approvals on an in-memory store: under policy manual a new spec
 * is stored pending and routed by no query until approved; a changed spec of an approved type
 * takes the type out of routing until it is approved in turn; a rejection keeps it out; each
 * step's events come from the store like every other event; policy auto is v1.1's behaviour.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { trustDocument } from "../../../../src/domain/trust/trust-document.js";
import { trustRootsOf } from "../../../../src/domain/trust/trust-roots.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import type { StoreEvent } from "../../../../src/domain/view/events.js";
import { Approvals } from "../../../../src/service/registration/approvals.js";
import { QueryService } from "../../../../src/service/queries/queries.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { TrustGate } from "../../../../src/service/registration/trust-gate.js";
import { registrarSettings, specBody } from "../../fixtures.js";

let t: number;
let store: MemoryStore;
let view: RegistryView;
let registrar: Registrar;
let queries: QueryService;
let approvals: Approvals;
let events: StoreEvent[];

/** Applies what the store holds to the view, keeping the events it derives. */
async function sync(): Promise<void> {
  const last = await store.lastRevision();
  if (view.revision >= last) return;
  const watch = await store.watch(view.revision);
  for await (const e of watch) {
    events.push(...view.apply(e));
    if (e.revision >= last) break;
  }
  watch.stop();
}

async function rejection(p: Promise<unknown>): Promise<RegistryError> {
  const e = await p.then(() => null, (err: unknown) => err);
  if (e instanceof RegistryError) return e;
  throw new Error(`expected a RegistryError, got ${String(e)}`);
}

const acmeSpec = (extra: Record<string, unknown> = {}) => specBody("acme-a", { tenant_scope: "acme", ...extra });

/** What each routing query returns of acme-a, seen by tenant acme. */
async function routedBy(): Promise<Record<string, boolean>> {
  // A lookup answers serialized bytes (SerializedReply); the others an object.
  const run = async (op: Parameters<QueryService["run"]>[0], body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const reply = await queries.run(op, body, "acme");
    return (reply instanceof Uint8Array ? JSON.parse(Buffer.from(reply).toString("utf8")) : reply) as Record<string, unknown>;
  };
  const lookup = await run("lookup", { capability: "acme-a.run" });
  const found = await run("find", { skill: "acme-a.run" });
  const discovered = await run("discover", {});
  const caps = await run("capabilities", {});
  const searched = await run("search", { query: "acme-a agent" });
  const routed = await run("route", { skill: "acme-a.run" }).then(() => true, () => false);
  const has = (list: unknown, key: string) => (list as Array<Record<string, unknown>>).some((x) => x[key] === "acme-a");
  return {
    lookup: has(lookup["providers"], "agent_type"),
    find: has(found["agents"], "agent_type"),
    discover: has(discovered["agents"], "id"),
    capabilities: (caps["capabilities"] as Array<{ providers: string[] }>).some((c) => c.providers.includes("acme-a")),
    search: has(searched["results"], "agent_type"),
    route: routed,
  };
}
const ALL = { lookup: true, find: true, discover: true, capabilities: true, search: true, route: true };
const NONE = { lookup: false, find: false, discover: false, capabilities: false, search: false, route: false };

const typesOf = (from: number) => events.slice(from).map((e) => e.type);

beforeEach(async () => {
  t = 1_000_000;
  store = new MemoryStore();
  view = new RegistryView();
  events = [];
  const roots = await trustRootsOf(trustDocument.parse({ tenants: { acme: { approval: "manual" } } }), async () => ({ keys: [] }));
  registrar = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: registrarSettings(), trust: new TrustGate(roots) });
  queries = new QueryService(view, async () => "reached" as const);
  approvals = new Approvals({ store, view, clock: { now: () => t }, listBytes: () => 1_000_000, waitForRevision: async () => "reached" as const });
});

describe("the approval gate under policy manual", () => {
  it("stores a new spec pending, routes it nowhere until an operator approves it, then everywhere", async () => {
    const reply = await registrar.register("acme-a", { spec: acmeSpec(), instance_id: "i1" }, { tenant: "acme" });
    expect(reply.approval).toEqual({ state: "pending" });
    expect(reply.warnings).toContain("spec 1.0.0 waits for an operator's approval: the instance is stored but not routable until the spec is approved");
    await sync();
    expect(typesOf(0)).toEqual(["registry.agent.pending", "registry.agent.registered"]);
    expect(events[0]!.data).toMatchObject({ agent_type: "acme-a", version: "1.0.0", tenant_scope: "acme", state: "pending", by: null, reason: null });
    expect(await routedBy()).toEqual(NONE);
    // Visible to operators: get and the pending list show it, with its state.
    const got = (await queries.run("get", { agent_type: "acme-a" }, "acme")) as { agent: { approval: unknown; instance_count: number } };
    expect(got.agent).toMatchObject({ approval: { state: "pending" }, instance_count: 1 });
    const pending = await approvals.pending({});
    expect(pending.agents.map((a) => [a.agent_type, a.approval])).toEqual([["acme-a", { state: "pending" }]]);
    expect((await approvals.pending({ tenant: null })).agents).toEqual([]);
    expect((await approvals.pending({ tenant: "acme" })).agents).toHaveLength(1);
    // Nor is it exported: the card (which the registry may sign) and the tool spec wait for the approval too.
    expect(await rejection(queries.run("card", { agent_type: "acme-a" }, "acme"))).toMatchObject({ code: "not_found", message: "agent type acme-a's spec waits for an operator's approval: it is not exported until approved" });
    expect(await rejection(queries.run("toolspec", { agent_type: "acme-a" }, "acme"))).toMatchObject({ code: "not_found" });

    t += 1000;
    const before = events.length;
    const approved = await approvals.decide("acme-a", { state: "approved", by: "alice", version: "1.0.0" });
    expect(approved).toMatchObject({ agent_type: "acme-a", version: "1.0.0", tenant_scope: "acme", approval: { state: "approved", by: "alice", at: new Date(t).toISOString() } });
    await sync();
    expect(typesOf(before)).toEqual(["registry.agent.approved", "registry.capability.changed"]);
    expect(events[before]!.data).toMatchObject({ state: "approved", by: "alice", reason: null, revision: approved.revision });
    expect(events[before + 1]!.data).toMatchObject({ capability: "acme-a.run", change: "added", providers: ["acme-a"] });
    expect(await routedBy()).toEqual(ALL);
    expect((await approvals.pending({})).agents).toEqual([]);
    expect(await queries.run("card", { agent_type: "acme-a" }, "acme")).toHaveProperty("card.name", "acme-a");

    // The same spec registered again (a restart, another replica) keeps its approval, quietly.
    const again = events.length;
    const second = await registrar.register("acme-a", { spec: acmeSpec(), instance_id: "i2" }, { tenant: "acme" });
    expect(second.approval).toEqual({ state: "approved", by: "alice", at: new Date(t).toISOString() });
    expect(second.warnings).toEqual([]);
    await sync();
    expect(typesOf(again)).toEqual(["registry.agent.registered"]);
    expect(await routedBy()).toEqual(ALL);
  });

  it("takes an approved type out of routing when another spec is registered, until that one is approved", async () => {
    await registrar.register("acme-a", { spec: acmeSpec(), instance_id: "i1" }, { tenant: "acme" });
    await sync();
    await approvals.decide("acme-a", { state: "approved", by: "alice" });
    await sync();
    expect(await routedBy()).toEqual(ALL);

    const before = events.length;
    const changed = await registrar.register("acme-a", { spec: acmeSpec({ version: "1.1.0", description: "now also calls an external API" }), instance_id: "i2" }, { tenant: "acme" });
    expect(changed.approval).toEqual({ state: "pending" });
    await sync();
    expect(typesOf(before)).toEqual(["registry.agent.pending", "registry.capability.changed", "registry.agent.registered"]);
    expect(events[before + 1]!.data).toMatchObject({ change: "removed", providers: [] });
    // Every instance of the type, the old version's too, is routed by the one stored spec: none is routable now.
    expect(await routedBy()).toEqual(NONE);
    // An approval names what was reviewed: the previous version is no longer stored.
    expect(await rejection(approvals.decide("acme-a", { state: "approved", by: "alice", version: "1.0.0" }))).toMatchObject({ code: "conflict", message: expect.stringMatching(/stored spec is version 1.1.0, not 1.0.0/) });
    const stored = (await approvals.pending({})).agents[0]!;
    expect(await rejection(approvals.decide("acme-a", { state: "approved", by: "alice", revision: stored.revision - 1 }))).toMatchObject({ code: "conflict" });
    await approvals.decide("acme-a", { state: "approved", by: "bob", version: "1.1.0", revision: stored.revision });
    await sync();
    expect(await routedBy()).toEqual(ALL);
  });

  it("keeps a rejected spec out of routing, with the reason, and lets the operator change their mind", async () => {
    await registrar.register("acme-a", { spec: acmeSpec(), instance_id: "i1" }, { tenant: "acme" });
    await sync();
    const before = events.length;
    const rejected = await approvals.decide("acme-a", { state: "rejected", by: "alice", reason: "calls an unvetted API" });
    expect(rejected.approval).toMatchObject({ state: "rejected", by: "alice", reason: "calls an unvetted API" });
    await sync();
    expect(typesOf(before)).toEqual(["registry.agent.rejected"]);
    expect(events[before]!.data).toMatchObject({ state: "rejected", by: "alice", reason: "calls an unvetted API" });
    expect(await routedBy()).toEqual(NONE);
    expect((await approvals.pending({})).agents).toEqual([]);
    expect((await approvals.pending({ state: "rejected" })).agents.map((a) => a.agent_type)).toEqual(["acme-a"]);

    // Registering the same spec again does not clear a rejection.
    const again = await registrar.register("acme-a", { spec: acmeSpec(), instance_id: "i2" }, { tenant: "acme" });
    expect(again.approval).toMatchObject({ state: "rejected" });
    expect(again.warnings).toContain("spec 1.0.0 was rejected by an operator: the instance is stored but not routable until the spec is approved");
    await sync();
    expect(await routedBy()).toEqual(NONE);

    expect(await rejection(approvals.decide("acme-a", { state: "rejected", by: "alice", reason: "again" }))).toMatchObject({ code: "conflict", message: "acme-a 1.0.0 is already rejected" });
    await approvals.decide("acme-a", { state: "approved", by: "carol" });
    await sync();
    expect(await routedBy()).toEqual(ALL);
    // And withdrawing an approval takes it out again.
    await approvals.decide("acme-a", { state: "rejected", by: "carol", reason: "withdrawn" });
    await sync();
    expect(await routedBy()).toEqual(NONE);
  });

  it("refuses a decision on an unknown type or on a registry-file entry, which is the operator's own and approved", async () => {
    expect(await rejection(approvals.decide("nobody", { state: "approved", by: "alice" }))).toMatchObject({ code: "not_found" });
    await registrar.register("acme-a", { spec: acmeSpec() }, { static: true });
    await sync();
    expect((await queries.run("get", { agent_type: "acme-a" }, "acme")) as object).not.toHaveProperty("agent.approval");
    expect(await routedBy()).toEqual(ALL);
    expect(await rejection(approvals.decide("acme-a", { state: "rejected", by: "alice", reason: "no" }))).toMatchObject({ code: "conflict", message: expect.stringMatching(/registry file/) });
    expect(events.map((e) => e.type)).not.toContain("registry.agent.pending");
  });
});

describe("policy auto", () => {
  it("routes a new spec at once, with no approval in any reply and no approval event (v1.1's behaviour)", async () => {
    const reply = await registrar.register("shared-a", { spec: specBody("shared-a"), instance_id: "i1" });
    expect(reply).not.toHaveProperty("approval");
    expect(reply.warnings).toEqual([]);
    await sync();
    expect(events.map((e) => e.type)).toEqual(["registry.agent.registered", "registry.capability.changed"]);
    const got = (await queries.run("get", { agent_type: "shared-a" }, null)) as { agent: Record<string, unknown> };
    expect(got.agent).not.toHaveProperty("approval");
    const lookup = JSON.parse(Buffer.from((await queries.run("lookup", { capability: "shared-a.run" }, null)) as Uint8Array).toString("utf8")) as { providers: unknown[] };
    expect(lookup.providers).toHaveLength(1);
    expect((await approvals.pending({})).agents).toEqual([]);
  });
});
