/**
 * The `graph` query of PROTOCOL.md section 11.2: an agent type's dependencies (what it needs,
 * transitively) or its dependents (what breaks when it goes), or the whole fleet's, each node
 * with its state now. Edges always go from the one that depends to what it depends on; a tool
 * found through an MCP server's capability gets an edge to that server (the tool needs it).
 * The answer is bounded: at most `maxBytes` of nodes, edges and problems, then a `truncated`
 * warning (docs/protocol.md, section 8).
 */
import type { Dependency } from "../../protocol/spec.js";
import { visibleTo, type AgentState } from "../model/model.js";
import type { DependentsIndex } from "./dependents-index.js";
import { agentNodeId, dependencyNodeId, providerState, resolveDependency, type FleetReader } from "./resolution.js";

import type { GraphEdge, GraphNode, GraphProblem } from "../../protocol/messages.js";

export type Graph = { nodes: GraphNode[]; edges: GraphEdge[]; problems: GraphProblem[] };
export type GraphRequest = {
  agent_type?: string | undefined;
  direction?: "dependencies" | "dependents" | undefined;
  /** Levels walked from `agent_type`: 1..16 on the wire (default 16); `sbom` walks them all (Infinity). */
  depth?: number | undefined;
};

export const DEFAULT_GRAPH_DEPTH = 16;

export interface GraphFleet extends FleetReader {
  all(): Iterable<AgentState>;
  readonly dependents: DependentsIndex;
}

/** Collects the answer, counting its JSON bytes so it stops before outgrowing a reply. */
class GraphBuilder {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges: GraphEdge[] = [];
  private readonly edgeKeys = new Set<string>();
  readonly problems: GraphProblem[] = [];
  private bytes = 0;
  full = false;

  constructor(private readonly maxBytes: number) {}

  private fits(item: object): boolean {
    if (this.full) return false;
    const size = JSON.stringify(item).length + 1;
    if (this.bytes + size > this.maxBytes) {
      this.full = true;
      return false;
    }
    this.bytes += size;
    return true;
  }

  node(n: GraphNode): boolean {
    if (this.nodes.has(n.id)) return true;
    if (!this.fits(n)) return false;
    this.nodes.set(n.id, n);
    return true;
  }

  edge(e: GraphEdge): void {
    const key = `${e.from}\u0000${e.to}\u0000${e.capability ?? ""}`;
    if (this.edgeKeys.has(key) || !this.fits(e)) return;
    this.edgeKeys.add(key);
    this.edges.push(e);
  }

  problem(p: GraphProblem): void {
    if (this.fits(p)) this.problems.push(p);
  }
}

const agentNode = (a: AgentState): GraphNode => ({ id: agentNodeId(a), kind: a.spec.kind, name: a.agent_type, version: a.spec.version, state: providerState(a, a.spec.version) });

/**
 * The node a declared dependency stands for, its edge from the one that declared it, and the
 * problems it has; returns the agent types to go on with (what it resolves to).
 */
function addDependency(fleet: GraphFleet, g: GraphBuilder, from: AgentState, index: number, dep: Dependency, res = resolveDependency(fleet, dep, from.spec.tenant_scope)): AgentState[] {
  const id = dependencyNodeId(dep);
  if (!g.node({ id, kind: dep.type, name: dep.name, version: dep.version, state: res.state })) return [];
  g.edge({ from: agentNodeId(from), to: id, capability: dep.capability ?? null });
  const path = `${from.agent_type}.depends.${index}`;
  if (res.state === "missing") g.problem({ severity: "warning", code: "missing", message: `${id}, a dependency of ${from.agent_type}, is not registered`, path });
  if (res.state === "version_mismatch") {
    const running = res.providers.map((t) => `${t} ${fleet.get(t)?.spec.version ?? "?"}`).join(", ");
    g.problem({ severity: "warning", code: "version_mismatch", message: `${from.agent_type} needs ${id}; registered: ${running}`, path });
  }
  // v1.2: what it resolves to was deprecated by an operator (docs/trust.md, "Deprecation"): it still works, but has a successor.
  for (const t of res.providers) {
    const d = fleet.get(t)?.deprecation;
    if (d) g.problem({ severity: "warning", code: "deprecated", message: `${from.agent_type} depends on ${id}: ${t} is deprecated${d.reason ? `: ${d.reason}` : ""}${d.successor ? `; use ${d.successor}` : ""}`, path });
  }
  const providers = res.providers.map((t) => fleet.get(t)!).filter((a) => a !== undefined);
  // What the declaration resolves to, when it is another node: the server a tool is a
  // capability of, or the agent running another version than the one declared.
  for (const p of providers) {
    const pid = agentNodeId(p);
    if (pid !== id && g.node(agentNode(p))) g.edge({ from: id, to: pid, capability: res.viaCapability ? dep.name : null });
  }
  return providers;
}

function dependenciesOf(fleet: GraphFleet, g: GraphBuilder, root: AgentState, maxDepth: number): void {
  g.node(agentNode(root));
  const expanded = new Set<string>([root.agent_type]);
  let level: AgentState[] = [root];
  for (let depth = 0; depth < maxDepth && level.length > 0 && !g.full; depth++) {
    const next: AgentState[] = [];
    for (const agent of level) {
      (agent.spec.depends ?? []).forEach((dep, i) => {
        for (const p of addDependency(fleet, g, agent, i, dep)) {
          if (!expanded.has(p.agent_type)) {
            expanded.add(p.agent_type);
            next.push(p);
          }
        }
      });
    }
    level = next;
  }
}

function dependentsOf(fleet: GraphFleet, g: GraphBuilder, root: AgentState, maxDepth: number, tenant: string | null): void {
  g.node(agentNode(root));
  const expanded = new Set<string>([root.agent_type]);
  let level: AgentState[] = [root];
  for (let depth = 0; depth < maxDepth && level.length > 0 && !g.full; depth++) {
    const next: AgentState[] = [];
    for (const target of level) {
      const caps = target.spec.capabilities.map((c) => c.name);
      for (const edge of fleet.dependents.edgesFor(target.agent_type, caps, (t) => fleet.get(t))) {
        const dependent = fleet.get(edge.dependent);
        if (!dependent || !visibleTo(dependent, tenant)) continue;
        // Only dependencies that do resolve to the target (a tool's name may match another's).
        const res = resolveDependency(fleet, edge.dep, dependent.spec.tenant_scope);
        if (!res.providers.includes(target.agent_type)) continue;
        if (!g.node(agentNode(dependent))) break;
        addDependency(fleet, g, dependent, edge.index, edge.dep, res);
        if (!expanded.has(dependent.agent_type)) {
          expanded.add(dependent.agent_type);
          next.push(dependent);
        }
      }
    }
    level = next;
  }
}

/** Every cycle among the edges, as an error each (a cycle can be stored when two replicas each took one half). */
function reportCycles(g: GraphBuilder): void {
  const out = new Map<string, string[]>();
  for (const e of g.edges) (out.get(e.from) ?? out.set(e.from, []).get(e.from)!).push(e.to);
  const state = new Map<string, "open" | "done">();
  for (const start of g.nodes.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first search; the path on the stack names a cycle when an edge goes back into it.
    const stack: { id: string; next: number }[] = [{ id: start, next: 0 }];
    state.set(start, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const targets = out.get(top.id) ?? [];
      if (top.next >= targets.length) {
        state.set(top.id, "done");
        stack.pop();
        continue;
      }
      const to = targets[top.next++]!;
      if (state.get(to) === "open") {
        const from = stack.findIndex((s) => s.id === to);
        const cycle = [...stack.slice(from).map((s) => s.id), to];
        g.problem({ severity: "error", code: "cycle", message: `dependency cycle ${cycle.join(" -> ")}`, path: to });
      } else if (!state.has(to)) {
        state.set(to, "open");
        stack.push({ id: to, next: 0 });
      }
    }
  }
}

/** The graph a tenant (null: shared agents only) may see; `root` is the agent type asked about, if any. */
export function dependencyGraph(fleet: GraphFleet, request: GraphRequest, root: AgentState | undefined, tenant: string | null, maxBytes: number): Graph {
  const g = new GraphBuilder(maxBytes);
  const depth = request.depth ?? DEFAULT_GRAPH_DEPTH;
  if (root && request.direction === "dependents") dependentsOf(fleet, g, root, depth, tenant);
  else if (root) dependenciesOf(fleet, g, root, depth);
  else {
    const agents = [...fleet.all()].filter((a) => visibleTo(a, tenant)).sort((a, b) => (a.agent_type < b.agent_type ? -1 : 1));
    for (const a of agents) {
      if (!g.node(agentNode(a))) break;
      (a.spec.depends ?? []).forEach((dep, i) => addDependency(fleet, g, a, i, dep));
    }
  }
  reportCycles(g);
  const graph: Graph = { nodes: [...g.nodes.values()], edges: g.edges, problems: g.problems };
  if (g.full) {
    graph.problems.push({ severity: "warning", code: "truncated", message: `the graph was cut to fit a reply (${maxBytes} bytes); ask about one agent_type with a smaller depth`, path: "" });
  }
  return graph;
}

/**
 * The registry file's warnings (PROTOCOL.md section 11.3: "reported by graph") added to a
 * graph's problems: all of them for the whole fleet's graph, those of its entries for one
 * agent type's, as many as fit `maxBytes` with the rest of the answer. Each keeps the file's
 * path (`servers[2].provides[1]`) and its message says it comes from the file.
 */
export function withFileWarnings(graph: Graph, warnings: readonly { code: string; message: string; path: string; entry?: string }[], oneAgent: boolean, maxBytes: number): Graph {
  if (warnings.length === 0) return graph;
  const names = new Set(graph.nodes.map((n) => n.name));
  let bytes = JSON.stringify(graph).length;
  const added: GraphProblem[] = [];
  for (const w of warnings) {
    if (oneAgent && (w.entry === undefined || !names.has(w.entry))) continue;
    const p: GraphProblem = { severity: "warning", code: w.code, message: `registry file: ${w.message}`, path: w.path };
    bytes += JSON.stringify(p).length + 1;
    if (bytes > maxBytes) break;
    added.push(p);
  }
  // Before a `truncated` warning, which stays last.
  const last = graph.problems[graph.problems.length - 1];
  const cut = last?.code === "truncated" ? graph.problems.length - 1 : graph.problems.length;
  return { ...graph, problems: [...graph.problems.slice(0, cut), ...added, ...graph.problems.slice(cut)] };
}
