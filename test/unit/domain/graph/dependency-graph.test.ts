import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { instanceKey, RemovalReason } from "../../../../src/domain/model/records.js";
import { dependencyGraph } from "../../../../src/domain/graph/graph-query.js";
import { dependencyWarnings, findCycle } from "../../../../src/domain/graph/dependency-checks.js";
import { resolveDependency } from "../../../../src/domain/graph/resolution.js";
import { MAX_INTENTS, changesGraph, decodeGraphRecord, encodeGraphRecord, intentOf, nextRecord, settled } from "../../../../src/domain/graph/graph-guard.js";
import type { Dependency } from "../../../../src/protocol/spec.js";
import type { StoreEvent } from "../../../../src/domain/view/events.js";
import { cap, makeSpec } from "../../fixtures.js";
import { renderGraph } from "../../../../src/cli/commands/graph.js";
import { colors } from "../../../../src/cli/table.js";
import { agentPut, del, gonePut, instPut } from "../../store-entries.js";

const agent = (name: string, version: string) => ({ type: "agent" as const, name, version });
const tool = (name: string, version: string) => ({ type: "tool" as const, name, version });

/** A view fed store entries one revision after another. */
function fleet() {
  const view = new RegistryView({ now: () => 1_000 });
  let rev = 0;
  const events: StoreEvent[] = [];
  const apply = (e: (rev: number) => Parameters<RegistryView["apply"]>[0]) => {
    const out = view.apply(e(++rev));
    events.push(...out);
    return out;
  };
  return {
    view,
    events,
    register(type: string, opts: { version?: string; depends?: Dependency[]; caps?: string[]; kind?: "agent" | "mcp_server" | "tool"; tenant?: string; instance?: string | false } = {}) {
      const spec = makeSpec({
        agent_type: type,
        version: opts.version ?? "1.0.0",
        capabilities: (opts.caps ?? [`${type}.run`]).map((c) => cap(c)),
        ...(opts.depends ? { depends: opts.depends } : {}),
        ...(opts.kind ? { kind: opts.kind } : {}),
        ...(opts.tenant ? { tenant_scope: opts.tenant } : {}),
      });
      apply((r) => agentPut(r, spec));
      const instance = opts.instance ?? "i1";
      if (instance !== false) apply((r) => instPut(r, type, instance, { version: spec.version }));
      return spec;
    },
    instance: (type: string, id: string, rec: Parameters<typeof instPut>[3] = {}) => apply((r) => instPut(r, type, id, rec)),
    leave: (type: string, id: string) => apply((r) => gonePut(r, type, id, RemovalReason.Evicted, 5)),
    remove: (key: string) => apply((r) => del(key, r)),
  };
}

describe("dependency resolution", () => {
  it("finds an agent by name, a tool by name or as a capability, and says each state", () => {
    const f = fleet();
    f.register("summarizer", { version: "2.0.0" });
    f.register("search-server", { kind: "mcp_server", caps: ["fetch", "search"] });
    f.register("idle", { instance: false });
    expect(resolveDependency(f.view, agent("summarizer", "2.0.0"), null)).toMatchObject({ state: "live", providers: ["summarizer"] });
    expect(resolveDependency(f.view, agent("summarizer", "1.0.0"), null).state).toBe("version_mismatch");
    expect(resolveDependency(f.view, tool("fetch", "9.9.9"), null)).toMatchObject({ state: "live", providers: ["search-server"], viaCapability: true });
    expect(resolveDependency(f.view, agent("fetch", "1.0.0"), null).state).toBe("missing");
    expect(resolveDependency(f.view, agent("idle", "1.0.0"), null).state).toBe("deregistered");
    f.instance("summarizer", "i1", { version: "2.0.0", status: "draining" });
    expect(resolveDependency(f.view, agent("summarizer", "2.0.0"), null).state).toBe("registered");
  });

  it("does not let a shared agent depend on a tenant's agent it cannot see", () => {
    const f = fleet();
    f.register("private", { tenant: "acme" });
    expect(resolveDependency(f.view, agent("private", "1.0.0"), null).state).toBe("missing");
    expect(resolveDependency(f.view, agent("private", "1.0.0"), "acme").state).toBe("live");
  });
});

describe("a name shared by entities of different kinds", () => {
  const server = (name: string, version: string) => ({ type: "mcp_server" as const, name, version });
  const resolve = (f: ReturnType<typeof fleet>, dep: Dependency) => {
    const r = resolveDependency(f.view, dep, null);
    return [r.state, r.providers];
  };

  it("never resolves a tool dependency to an agent's skill of that name, only to the servers' tool", () => {
    const f = fleet();
    f.register("search-agent", { caps: ["search"] });
    expect(resolve(f, tool("search", "1.0.0"))).toEqual(["missing", []]);
    f.register("search-service", { kind: "mcp_server", caps: ["search", "suggest"] });
    expect(resolve(f, tool("search", "1.0.0"))).toEqual(["live", ["search-service"]]);
    // A tool entry holding several tools (a tool spec registered with kind "tool") serves them too.
    f.register("toolbox", { kind: "tool", caps: ["search"] });
    expect(resolve(f, tool("search", "1.0.0"))).toEqual(["live", ["search-service", "toolbox"]]);
  });

  it("does not find a cycle through the agent's own skill (agentgateway's v2-full search-agent)", () => {
    const f = fleet();
    f.register("search-service", { kind: "mcp_server", caps: ["search", "suggest"] });
    const agentSpec = makeSpec({ agent_type: "search-agent", capabilities: [cap("search")], depends: [tool("search", "1.0.0")] });
    expect(findCycle(f.view, agentSpec)).toBeNull();
    f.register("search-agent", { caps: ["search"], depends: [tool("search", "1.0.0")] });
    const g = dependencyGraph(f.view, { agent_type: "search-agent" }, f.view.get("search-agent"), null, 1 << 20);
    expect(g.edges).toEqual([
      { from: "agent:search-agent@1.0.0", to: "tool:search@1.0.0", capability: null },
      { from: "tool:search@1.0.0", to: "mcp_server:search-service@1.0.0", capability: "search" },
    ]);
    expect(g.problems).toEqual([]);
    // What breaks when the server goes: the agent, and not the agent itself through its skill.
    const up = dependencyGraph(f.view, { agent_type: "search-agent", direction: "dependents" }, f.view.get("search-agent"), null, 1 << 20);
    expect(up.edges).toEqual([]);
  });

  it("resolves each dependency type only to an entry of that kind", () => {
    const f = fleet();
    f.register("helper"); // an agent
    f.register("files", { kind: "mcp_server", caps: ["files.read"] });
    f.register("summarize", { kind: "tool", caps: ["summarize"] });
    // Each name asked for as every type: only its own kind finds it.
    expect(resolve(f, agent("helper", "1.0.0"))).toEqual(["live", ["helper"]]);
    expect(resolve(f, tool("helper", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, server("helper", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, server("files", "1.0.0"))).toEqual(["live", ["files"]]);
    expect(resolve(f, agent("files", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, tool("files", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, tool("summarize", "1.0.0"))).toEqual(["live", ["summarize"]]);
    expect(resolve(f, agent("summarize", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, server("summarize", "1.0.0"))).toEqual(["missing", []]);
    // A server's tool and an agent's skill are tools or nothing: never an agent or a server.
    f.register("reader", { caps: ["files.read"] });
    expect(resolve(f, tool("files.read", "1.0.0"))).toEqual(["live", ["files"]]);
    expect(resolve(f, tool("helper.run", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, agent("files.read", "1.0.0"))).toEqual(["missing", []]);
    expect(resolve(f, server("files.read", "1.0.0"))).toEqual(["missing", []]);
  });

  it("does not find a cycle through an entry of another kind that shares a name", () => {
    const f = fleet();
    // An agent "lookup" and a server whose tool is "lookup": agent lookup depends on the tool.
    f.register("lookup-server", { kind: "mcp_server", caps: ["lookup"], depends: [server("lookup", "1.0.0")] });
    expect(findCycle(f.view, makeSpec({ agent_type: "lookup", capabilities: [cap("lookup")], depends: [tool("lookup", "1.0.0")] }))).toBeNull();
    // A server "index" depending on an agent "indexer" whose tool dependency names "index".
    f.register("indexer", { depends: [tool("index", "1.0.0")] });
    expect(findCycle(f.view, makeSpec({ agent_type: "index", kind: "mcp_server", capabilities: [cap("crawl")], depends: [agent("indexer", "1.0.0")] }))).toBeNull();
    // A tool of that name on the server does close it.
    expect(findCycle(f.view, makeSpec({ agent_type: "index", kind: "mcp_server", capabilities: [cap("index")], depends: [agent("indexer", "1.0.0")] }))?.path).toEqual(["index", "indexer", "index"]);
  });

  it("tells no dependent of an agent's skill that a tool of that name is lost", () => {
    const f = fleet();
    f.register("search-service", { kind: "mcp_server", caps: ["search"] });
    f.register("search-agent", { caps: ["search"], depends: [tool("search", "1.0.0")] });
    f.register("other-agent", { caps: ["search"] });
    f.events.length = 0;
    f.leave("other-agent", "i1");
    expect(f.events.filter((e) => e.type.includes("dependency"))).toEqual([]);
    f.leave("search-service", "i1");
    expect(f.events.filter((e) => e.type.includes("dependency")).map((e) => [e.type, e.subject])).toEqual([["registry.agent.dependency_lost", "search-agent"]]);
  });
});

describe("cycles at registration", () => {
  it("refuses a spec that depends on itself, even on a first registration", () => {
    const f = fleet();
    const spec = makeSpec({ agent_type: "loop", depends: [agent("loop", "1.0.0")] });
    expect(findCycle(f.view, spec)).toEqual({ index: 0, path: ["loop", "loop"] });
  });

  it("names the cycle a chain through the fleet closes, stopped agents included", () => {
    const f = fleet();
    f.register("b", { depends: [agent("c", "1.0.0")] });
    f.register("c", { depends: [agent("a", "1.0.0")], instance: false });
    const spec = makeSpec({ agent_type: "a", depends: [tool("unrelated", "1.0.0"), agent("b", "1.0.0")] });
    expect(findCycle(f.view, spec)).toEqual({ index: 1, path: ["a", "b", "c", "a"] });
    expect(findCycle(f.view, makeSpec({ agent_type: "d", depends: [agent("b", "1.0.0")] }))).toBeNull();
  });

  it("follows a tool dependency to the server that provides it", () => {
    const f = fleet();
    f.register("tools", { kind: "mcp_server", caps: ["fetch"], depends: [agent("planner", "1.0.0")] });
    expect(findCycle(f.view, makeSpec({ agent_type: "planner", depends: [tool("fetch", "1.0.0")] }))?.path).toEqual(["planner", "tools", "planner"]);
  });

  it("never reports a cycle in a fleet that has none (property)", () => {
    // A random DAG: agent i may only depend on agents with a smaller index.
    const dag = fc.array(fc.array(fc.nat(), { maxLength: 4 }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(dag, (edges) => {
        const f = fleet();
        const names = edges.map((_, i) => `n${i}`);
        const deps = edges.map((targets, i) => (i === 0 ? [] : [...new Set(targets.map((t) => t % i))]));
        deps.forEach((targets, i) => {
          const depends = targets.map((t) => agent(names[t]!, "1.0.0"));
          expect(findCycle(f.view, makeSpec({ agent_type: names[i]!, depends }))).toBeNull();
          f.register(names[i]!, { depends });
        });
        // n0 depending on the last node closes a cycle exactly when the last one reaches n0.
        const last = names.length - 1;
        const reaches = new Set([last]);
        for (let i = last; i >= 0; i--) if (reaches.has(i)) for (const t of deps[i]!) reaches.add(t);
        const back = findCycle(f.view, makeSpec({ agent_type: "n0", depends: [agent(names[last]!, "1.0.0")] }));
        expect(back !== null).toBe(reaches.has(0));
        if (back) {
          expect(back.path[0]).toBe("n0");
          expect(back.path.at(-1)).toBe("n0");
        }
      }),
      { numRuns: 50 },
    );
  });

  it("warns of each dependency that is not live", () => {
    const f = fleet();
    f.register("ok");
    f.register("old", { version: "1.0.0" });
    expect(dependencyWarnings(f.view, [agent("ok", "1.0.0"), agent("old", "2.0.0"), agent("gone", "1.0.0")], null)).toEqual([
      "depends.1: agent:old@2.0.0 is version mismatch (old)",
      "depends.2: agent:gone@1.0.0 is missing",
    ]);
  });
});

describe("cycles with specs on their way (the graph key)", () => {
  const pending = (type: string, depends: Dependency[], opts: { caps?: string[]; tenant?: string } = {}) => ({
    agent_type: type,
    tenant_scope: opts.tenant ?? null,
    capabilities: opts.caps ?? [`${type}.run`],
    depends,
  });

  it("counts a pending spec's edges as stored, though the view holds none of it", () => {
    const f = fleet();
    const spec = makeSpec({ agent_type: "b", depends: [agent("a", "1.0.0")] });
    expect(findCycle(f.view, spec)).toBeNull();
    expect(findCycle(f.view, spec, [pending("a", [agent("b", "1.0.0")])])).toEqual({ index: 0, path: ["b", "a", "b"] });
  });

  it("counts the stored spec's edges too: the pending one may never land", () => {
    const f = fleet();
    f.register("a", { depends: [agent("b", "1.0.0")] });
    // a is on its way to depending on c instead; until it lands, a -> b still stands.
    const spec = makeSpec({ agent_type: "b", depends: [agent("a", "1.0.0")] });
    expect(findCycle(f.view, spec, [pending("a", [agent("c", "1.0.0")])])?.path).toEqual(["b", "a", "b"]);
  });

  it("follows a tool dependency to a pending spec providing it, and ignores pending specs of the registering type", () => {
    const f = fleet();
    const planner = makeSpec({ agent_type: "planner", depends: [tool("fetch", "1.0.0")] });
    expect(findCycle(f.view, planner, [pending("tools", [agent("planner", "1.0.0")], { caps: ["fetch"] })])?.path).toEqual(["planner", "tools", "planner"]);
    // Another spec of the registering type on its way: only one of the two can be stored (the same revision expected).
    expect(findCycle(f.view, planner, [pending("planner", [agent("planner", "1.0.0")])])).toBeNull();
  });

  it("resolves a name both ways while a pending spec may change whether that type is seen", () => {
    const f = fleet();
    f.register("fetch", { tenant: "acme", caps: ["other"] });
    f.register("server", { kind: "mcp_server", caps: ["fetch"], depends: [agent("client", "1.0.0")] });
    const client = makeSpec({ agent_type: "client", depends: [tool("fetch", "1.0.0")] });
    // Unseen by a shared agent, the name goes to the server providing a capability of it.
    expect(findCycle(f.view, client)?.path).toEqual(["client", "server", "client"]);
    // A pending shared spec of "fetch" may land, or not: the server's edge still counts.
    expect(findCycle(f.view, client, [pending("fetch", [])])?.path).toEqual(["client", "server", "client"]);
  });

  it("finds no cycle the pending specs and the view cannot close (property: a DAG stays one)", () => {
    const dag = fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: 2, maxLength: 10 });
    fc.assert(
      fc.property(dag, fc.nat(), (edges, split) => {
        const f = fleet();
        const names = edges.map((_, i) => `n${i}`);
        const deps = edges.map((targets, i) => (i === 0 ? [] : [...new Set(targets.map((t) => t % i))].map((t) => agent(names[t]!, "1.0.0"))));
        // Some nodes stored, the others pending: the union is a DAG, so no cycle anywhere.
        const cut = split % names.length;
        const pend = deps.slice(cut).map((d, j) => pending(names[cut + j]!, d));
        deps.slice(0, cut).forEach((d, i) => f.register(names[i]!, { depends: d }));
        expect(findCycle(f.view, makeSpec({ agent_type: "top", depends: [agent(names.at(-1)!, "1.0.0")] }), pend)).toBeNull();
        // n0 depending on the last node: a cycle exactly when the last reaches n0, stored or pending.
        const reaches = new Set([names.length - 1]);
        for (let i = names.length - 1; i >= 0; i--) if (reaches.has(i)) for (const d of deps[i]!) reaches.add(names.indexOf(d.name));
        const n0 = makeSpec({ agent_type: "n0", depends: [agent(names.at(-1)!, "1.0.0")] });
        expect(findCycle(f.view, n0, pend.filter((p) => p.agent_type !== "n0")) !== null).toBe(reaches.has(0));
      }),
      { numRuns: 50 },
    );
  });
});

describe("the graph key's rules", () => {
  const base = makeSpec({ agent_type: "a", depends: [agent("b", "1.0.0")] });

  it("takes a turn only for a spec write that can add an edge", () => {
    expect(changesGraph(makeSpec({ agent_type: "a" }), undefined)).toBe(false);
    expect(changesGraph(base, undefined)).toBe(true);
    expect(changesGraph(base, base)).toBe(false);
    // A new version with the same dependencies, tenant and capability names adds nothing.
    expect(changesGraph({ ...base, version: "2.0.0", description: "other" }, base)).toBe(false);
    expect(changesGraph({ ...base, depends: [agent("c", "1.0.0")] }, base)).toBe(true);
    expect(changesGraph({ ...base, tenant_scope: "acme" }, base)).toBe(true);
    expect(changesGraph({ ...base, capabilities: [...base.capabilities, { ...base.capabilities[0]!, name: "fetch" }] }, base)).toBe(true);
    expect(changesGraph(base, makeSpec({ agent_type: "a" }))).toBe(true);
  });

  it("keeps an intent until the view shows its agent key moved off the revision it expects", () => {
    const f = fleet();
    const intent = intentOf(base, 0, "x");
    expect(settled(intent, f.view)).toBe(false);
    f.register("a", { depends: [agent("b", "1.0.0")], instance: false });
    expect(settled(intent, f.view)).toBe(true);
    const later = intentOf(base, f.view.get("a")!.revision, "y");
    expect(settled(later, f.view)).toBe(false);
    f.remove("agents.a");
    expect(settled(later, f.view)).toBe(true);
  });

  it("replaces a registration's earlier intent, drops the oldest past the bounds, and reads a damaged record as empty", () => {
    const mine = (id: string) => intentOf(base, 0, id);
    expect(nextRecord([mine("p"), mine("q")], mine("p")).record.intents.map((i) => i.id)).toEqual(["q", "p"]);
    const many = Array.from({ length: MAX_INTENTS }, (_, i) => mine(`i${i}`));
    const { record, dropped } = nextRecord(many, mine("new"));
    expect(dropped).toBe(1);
    expect(record.intents).toHaveLength(MAX_INTENTS);
    expect(record.intents[0]!.id).toBe("i1");
    expect(decodeGraphRecord(encodeGraphRecord(record))).toEqual(record);
    expect(decodeGraphRecord(new TextEncoder().encode("not json")).intents).toEqual([]);
    expect(decodeGraphRecord(new TextEncoder().encode(JSON.stringify({ kind: "graph", intents: [{ id: 1 }, mine("ok")] }))).intents.map((i) => i.id)).toEqual(["ok"]);
  });
});

describe("the graph query", () => {
  const BIG = 1 << 20;

  it("answers an agent's dependencies with their states, edges from the one that depends", () => {
    const f = fleet();
    f.register("search-server", { kind: "mcp_server", caps: ["fetch"] });
    f.register("summarizer", { depends: [tool("fetch", "1.2.3")] });
    f.register("writer", { depends: [{ ...agent("summarizer", "1.0.0"), capability: "summarizer.run" }, agent("critic", "1.0.0")] });
    const g = dependencyGraph(f.view, { agent_type: "writer" }, f.view.get("writer"), null, BIG);
    expect(g.nodes.map((n) => [n.id, n.state])).toEqual([
      ["agent:writer@1.0.0", "live"],
      ["agent:summarizer@1.0.0", "live"],
      ["agent:critic@1.0.0", "missing"],
      ["tool:fetch@1.2.3", "live"],
      ["mcp_server:search-server@1.0.0", "live"],
    ]);
    expect(g.edges).toEqual([
      { from: "agent:writer@1.0.0", to: "agent:summarizer@1.0.0", capability: "summarizer.run" },
      { from: "agent:writer@1.0.0", to: "agent:critic@1.0.0", capability: null },
      { from: "agent:summarizer@1.0.0", to: "tool:fetch@1.2.3", capability: null },
      { from: "tool:fetch@1.2.3", to: "mcp_server:search-server@1.0.0", capability: "fetch" },
    ]);
    expect(g.problems).toEqual([{ severity: "warning", code: "missing", message: expect.stringContaining("agent:critic@1.0.0"), path: "writer.depends.1" }]);
    // depth 1 stops at the direct dependencies.
    expect(dependencyGraph(f.view, { agent_type: "writer", depth: 1 }, f.view.get("writer"), null, BIG).nodes).toHaveLength(3);
  });

  it("answers what depends on an agent, transitively, so an operator sees what breaks", () => {
    const f = fleet();
    f.register("db");
    f.register("api", { depends: [agent("db", "1.0.0")] });
    f.register("ui", { depends: [agent("api", "1.0.0")] });
    f.register("other");
    const g = dependencyGraph(f.view, { agent_type: "db", direction: "dependents" }, f.view.get("db"), null, BIG);
    expect(g.nodes.map((n) => n.id).sort()).toEqual(["agent:api@1.0.0", "agent:db@1.0.0", "agent:ui@1.0.0"]);
    expect(g.edges).toEqual([
      { from: "agent:api@1.0.0", to: "agent:db@1.0.0", capability: null },
      { from: "agent:ui@1.0.0", to: "agent:api@1.0.0", capability: null },
    ]);
  });

  it("reports a stored cycle as an error, and cuts a graph that outgrows the reply", () => {
    const f = fleet();
    // Two replicas each accepted one half: the view holds the cycle.
    f.register("x", { depends: [agent("y", "1.0.0")] });
    f.register("y", { depends: [agent("x", "1.0.0")] });
    const g = dependencyGraph(f.view, {}, undefined, null, BIG);
    expect(g.problems.filter((p) => p.code === "cycle")).toHaveLength(1);
    expect(g.problems[0]).toMatchObject({ severity: "error", message: "dependency cycle agent:x@1.0.0 -> agent:y@1.0.0 -> agent:x@1.0.0" });
    for (let i = 0; i < 50; i++) f.register(`filler-${i}`);
    const cut = dependencyGraph(f.view, {}, undefined, null, 2_000);
    expect(JSON.stringify({ nodes: cut.nodes, edges: cut.edges }).length).toBeLessThan(2_000);
    expect(cut.problems.at(-1)).toMatchObject({ code: "truncated", severity: "warning" });
  });
});

describe("dependency events", () => {
  const depEvents = (events: StoreEvent[]) => events.filter((e) => e.type.includes("dependency")).map((e) => [e.type, e.subject, (e.data as { state: string }).state]);

  it("tells each dependent once when its dependency stops being live and when it comes back", () => {
    const f = fleet();
    f.register("db");
    f.register("api", { depends: [agent("db", "1.0.0")] });
    f.register("batch", { depends: [agent("db", "1.0.0")], instance: false });
    f.events.length = 0;
    f.instance("db", "i1", { status: "draining" });
    expect(depEvents(f.events)).toEqual([
      ["registry.agent.dependency_lost", "api", "registered"],
      ["registry.agent.dependency_lost", "batch", "registered"],
    ]);
    f.events.length = 0;
    f.instance("db", "i1"); // a plain heartbeat would be the same status: ready again
    f.instance("db", "i1");
    expect(depEvents(f.events)).toEqual([
      ["registry.agent.dependency_restored", "api", "live"],
      ["registry.agent.dependency_restored", "batch", "live"],
    ]);
    f.events.length = 0;
    f.instance("db", "i2"); // a second instance: still live, no event
    f.leave("db", "i1");
    expect(depEvents(f.events)).toEqual([]);
    f.leave("db", "i2");
    expect(depEvents(f.events)).toEqual([
      ["registry.agent.dependency_lost", "api", "deregistered"],
      ["registry.agent.dependency_lost", "batch", "deregistered"],
    ]);
  });

  it("follows tools through the servers that provide them, and agent records that vanish", () => {
    const f = fleet();
    f.register("s1", { kind: "mcp_server", caps: ["fetch"] });
    f.register("s2", { kind: "mcp_server", caps: ["fetch"] });
    f.register("reader", { depends: [tool("fetch", "1.0.0")] });
    f.events.length = 0;
    f.leave("s1", "i1");
    expect(depEvents(f.events)).toEqual([]); // s2 still serves fetch
    f.remove("agents.s2");
    expect(depEvents(f.events)).toEqual([["registry.agent.dependency_lost", "reader", "deregistered"]]);
  });

  it("derives the same events whatever order the dependents were loaded in", () => {
    const a = fleet();
    const b = fleet();
    a.register("db");
    a.register("one", { depends: [agent("db", "1.0.0")] });
    a.register("two", { depends: [agent("db", "1.0.0")] });
    b.register("two", { depends: [agent("db", "1.0.0")] });
    b.register("one", { depends: [agent("db", "1.0.0")] });
    b.register("db");
    a.events.length = 0;
    b.events.length = 0;
    a.remove(instanceKey("db", "i1"));
    b.remove(instanceKey("db", "i1"));
    expect(depEvents(a.events)).toEqual(depEvents(b.events));
    expect(a.events.map((e) => e.index)).toEqual(b.events.map((e) => e.index));
  });
});

describe("agent-registry graph's tree", () => {
  it("draws a stored cycle once, naming the node met again", () => {
    const f = fleet();
    f.register("x", { depends: [agent("y", "1.0.0")] });
    f.register("y", { depends: [agent("x", "1.0.0")] });
    f.register("z", { depends: [agent("x", "1.0.0")] });
    const g = dependencyGraph(f.view, {}, undefined, null, 1 << 20);
    expect(renderGraph(g, colors(false))).toEqual([
      "agent:z@1.0.0  live",
      "└─ agent:x@1.0.0  live",
      "   └─ agent:y@1.0.0  live",
      "      └─ agent:x@1.0.0  live  (above)",
    ]);
  });
});
