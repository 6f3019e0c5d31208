/**
 * Deprecation (docs/trust.md, "Deprecation") through the registrar, the view, the queries and
 * the operator's Deprecations on an in-memory store: a deprecated type stays routable and every
 * query marks it; it loses ties to a type that is not deprecated; the mark survives
 * registrations of the type, a new version included, until undeprecated; decisions on what was
 * not reviewed, or that change nothing, are refused and write nothing; each decision is one event.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/adapters/memory/memory-store.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import type { StoreEvent } from "../../../../src/domain/view/events.js";
import { readAgentRecord } from "../../../../src/domain/model/records.js";
import { Deprecations } from "../../../../src/service/registration/deprecations.js";
import { QueryService } from "../../../../src/service/queries/queries.js";
import { Registrar } from "../../../../src/service/registration/registrar.js";
import { InlineSchemaChecks } from "../../../../src/service/registration/schema-checks.js";
import { registrarSettings, specBody } from "../../fixtures.js";

let t: number;
let store: MemoryStore;
let view: RegistryView;
let registrar: Registrar;
let queries: QueryService;
let deprecations: Deprecations;
let events: StoreEvent[];

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

const run = async (op: Parameters<QueryService["run"]>[0], body: Record<string, unknown>): Promise<any> => {
  const reply = await queries.run(op, body, null);
  return reply instanceof Uint8Array ? JSON.parse(Buffer.from(reply).toString("utf8")) : reply;
};
const shared = (type: string, extra: Record<string, unknown> = {}) =>
  specBody(type, { capabilities: [{ name: "text.summarize", description: `summarizes (${type})`, input_schema: {}, output_schema: {} }], ...extra });
const typesOf = (from: number) => events.slice(from).map((e) => e.type);
const DEPRECATED = { by: "alice", reason: "replaced by new-sum", successor: "new-sum" };

beforeEach(async () => {
  t = 1_000_000;
  store = new MemoryStore();
  view = new RegistryView();
  events = [];
  registrar = new Registrar({ store, view, checker: new InlineSchemaChecks(), clock: { now: () => t }, settings: registrarSettings() });
  queries = new QueryService(view, async () => "reached" as const);
  deprecations = new Deprecations({ store, clock: { now: () => t } });
  await registrar.register("old-sum", { spec: shared("old-sum"), instance_id: "i1" }, {});
  t += 10;
  await registrar.register("new-sum", { spec: shared("new-sum"), instance_id: "j1" }, {});
  await sync();
});

describe("deprecation of an agent type", () => {
  it("keeps the type routable, marks it in every answer, and gives ties to the type that is not deprecated", async () => {
    expect((await run("route", { skill: "text.summarize" })).agent_type).toBe("old-sum");
    t += 1000;
    const before = events.length;
    const reply = await deprecations.decide("old-sum", { deprecated: true, ...DEPRECATED, version: "1.0.0" });
    const mark = { ...DEPRECATED, at: new Date(t).toISOString() };
    expect(reply).toEqual({ agent_type: "old-sum", version: "1.0.0", tenant_scope: null, deprecated: mark, revision: reply.revision });
    await sync();
    expect(typesOf(before)).toEqual(["registry.agent.deprecated"]);
    expect(events[before]!.data).toEqual({ agent_type: "old-sum", version: "1.0.0", tenant_scope: null, deprecated: true, by: "alice", reason: "replaced by new-sum", successor: "new-sum", revision: reply.revision });

    const lookup = await run("lookup", { capability: "text.summarize" });
    expect(lookup.providers.map((p: any) => [p.agent_type, p.deprecated])).toEqual([["new-sum", undefined], ["old-sum", mark]]);
    const route = await run("route", { skill: "text.summarize" });
    expect(route.agent_type).toBe("new-sum");
    expect(route.deprecated).toBeUndefined();
    expect(route.candidates).toEqual([{ agent_type: "new-sum", score: 1 }, { agent_type: "old-sum", score: 1, deprecated: mark }]);
    expect((await run("find", { skill: "text.summarize" })).agents.find((a: any) => a.agent_type === "old-sum").deprecated).toEqual(mark);
    expect((await run("get", { agent_type: "old-sum" })).agent.deprecated).toEqual(mark);
    expect((await run("search", { query: "summarizes old-sum" })).results.find((r: any) => r.agent_type === "old-sum").deprecated).toEqual(mark);
    expect((await run("discover", {})).agents.map((a: any) => [a.id, a.deprecated])).toEqual([["new-sum", undefined], ["old-sum", mark]]);
    // Alone, it still routes: a warning, not a removal.
    const route2 = await run("route", { skill: "text.summarize", tags: [] });
    expect(route2.candidates).toHaveLength(2);
    await registrar.deregisterInstance("new-sum", "j1");
    await sync();
    expect(await run("route", { skill: "text.summarize" })).toMatchObject({ agent_type: "old-sum", deprecated: mark });
  });

  it("survives registrations of the type, a new version included, until an operator undeprecates it", async () => {
    const first = await deprecations.decide("old-sum", { deprecated: true, by: "alice" });
    await sync();
    const from = events.length;
    t += 1000;
    await registrar.register("old-sum", { spec: shared("old-sum"), instance_id: "i2" }, {});
    await registrar.register("old-sum", { spec: shared("old-sum", { version: "1.1.0" }), instance_id: "i3" }, {});
    await sync();
    expect(typesOf(from)).not.toContain("registry.agent.deprecated");
    expect(typesOf(from)).not.toContain("registry.agent.undeprecated");
    const stored = readAgentRecord((await store.get("agents.old-sum"))!.value, "old-sum");
    expect(stored).toMatchObject({ spec: { version: "1.1.0" }, deprecation: { by: "alice", at: 1_000_010 } });
    expect((await run("get", { agent_type: "old-sum" })).agent.deprecated).toEqual({ by: "alice", at: first.deprecated!.at });

    const undone = await deprecations.decide("old-sum", { deprecated: false, by: "bob", reason: "kept after all" });
    expect(undone.deprecated).toBeNull();
    await sync();
    expect(events.at(-1)).toMatchObject({ type: "registry.agent.undeprecated", data: { deprecated: false, by: "bob", reason: "kept after all", successor: null, version: "1.1.0" } });
    expect((await run("get", { agent_type: "old-sum" })).agent.deprecated).toBeUndefined();
    expect(readAgentRecord((await store.get("agents.old-sum"))!.value, "old-sum")).not.toHaveProperty("deprecation");
  });

  it("makes graph warn whoever depends on the deprecated type, naming the successor", async () => {
    await registrar.register("report", { spec: specBody("report", { depends: [{ type: "agent", name: "old-sum", version: "1.0.0" }] }), instance_id: "r1" }, {});
    await sync();
    const problems = async () => (await run("graph", { agent_type: "report" })).problems.filter((p: any) => p.code === "deprecated");
    expect(await problems()).toEqual([]);
    await deprecations.decide("old-sum", { deprecated: true, ...DEPRECATED });
    await sync();
    expect(await problems()).toEqual([{ severity: "warning", code: "deprecated", message: "report depends on agent:old-sum@1.0.0: old-sum is deprecated: replaced by new-sum; use new-sum", path: "report.depends.0" }]);
  });

  it("refuses what was not reviewed, what changes nothing, and a type succeeding itself, writing nothing", async () => {
    const revision = await store.lastRevision();
    expect(await rejection(deprecations.decide("old-sum", { deprecated: true, by: "a", version: "2.0.0" }))).toMatchObject({ code: "conflict" });
    expect(await rejection(deprecations.decide("old-sum", { deprecated: true, by: "a", revision: 1 }))).toMatchObject({ code: "conflict" });
    expect(await rejection(deprecations.decide("old-sum", { deprecated: false, by: "a" }))).toMatchObject({ code: "conflict", message: "old-sum is not deprecated" });
    expect(await rejection(deprecations.decide("old-sum", { deprecated: true, by: "a", successor: "old-sum" }))).toMatchObject({ code: "invalid_request" });
    expect(await rejection(deprecations.decide("nobody", { deprecated: true, by: "a" }))).toMatchObject({ code: "not_found" });
    expect(await store.lastRevision()).toBe(revision);
    await deprecations.decide("old-sum", { deprecated: true, by: "a", reason: "old" });
    expect(await rejection(deprecations.decide("old-sum", { deprecated: true, by: "b", reason: "old" }))).toMatchObject({ code: "conflict", message: "old-sum is already deprecated: old" });
    // Other words replace the first ones, one more event.
    await sync();
    const from = events.length;
    await deprecations.decide("old-sum", { deprecated: true, by: "b", reason: "older", successor: "new-sum" });
    await sync();
    expect(typesOf(from)).toEqual(["registry.agent.deprecated"]);
    expect(events.at(-1)!.data).toMatchObject({ by: "b", reason: "older", successor: "new-sum" });
  });
});
