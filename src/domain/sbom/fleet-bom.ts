/**
 * What an SBOM of the fleet (PROTOCOL.md section 11.2, `sbom`) lists, before it is written in
 * one format or the other: an entry per node of the dependency graph (registered agent types
 * with what their specs say; declared dependencies nobody registered with what the
 * declaration says), an MCP server's tools nested in it, the models its providers name, and
 * what each entry depends on. References are the graph's node ids, so they are unique and
 * every dependency resolves to an entry of the same document.
 *
 * A node is looked up by name, so an agent the asker may not see (another tenant's, named by
 * a declaration) is left out as `get` would leave it out: the entry is the declaration, as
 * for a dependency nobody registered, and nothing of the other tenant's spec is written.
 */
import type { Graph } from "../graph/graph-query.js";
import type { FleetReader } from "../graph/resolution.js";
import { agentNodeId } from "../graph/resolution.js";
import type { DependencyState } from "../../protocol/events.js";
import type { AgentSpec } from "../spec/spec.js";
import { visibleTo } from "../model/model.js";

export type BomTool = { ref: string; name: string; description: string };
export type BomModel = { ref: string; name: string; provider: string; kind: string };

export type BomEntry = {
  ref: string;
  kind: string;
  name: string;
  version: string;
  state: DependencyState;
  /** The stored spec, when the entry is a registered agent type at this version. */
  spec: AgentSpec | null;
  tools: BomTool[];
};

export type FleetBom = {
  /** The agent the document is about (its dependency closure), or null for the whole fleet. */
  root: BomEntry | null;
  entries: BomEntry[];
  models: BomModel[];
  /** ref -> refs it depends on (every ref is an entry's, a nested tool's or a model's). */
  dependsOn: Map<string, string[]>;
};

const toolRef = (serverRef: string, tool: string) => `${serverRef}/${tool}`;
const modelRef = (provider: string, model: string | null) => (model === null ? `model:${provider}` : `model:${provider}/${model}`);

/** The models a spec's providers name: one per model, or the provider itself when it lists none. */
function modelsOf(spec: AgentSpec): BomModel[] {
  const out: BomModel[] = [];
  for (const p of spec.providers ?? []) {
    const models = p.models.length > 0 ? p.models : [null];
    for (const m of models) out.push({ ref: modelRef(p.id, m), name: m ?? p.id, provider: p.id, kind: p.kind });
  }
  return out;
}

/**
 * The document's content from a graph (the whole fleet's, or one agent's dependencies) as
 * `tenant` (null: the shared view) sees the fleet.
 */
export function fleetBom(fleet: FleetReader, graph: Graph, rootRef: string | null, tenant: string | null): FleetBom {
  const entries = new Map<string, BomEntry>();
  const models = new Map<string, BomModel>();
  const dependsOn = new Map<string, string[]>();
  for (const node of graph.nodes) {
    const agent = fleet.get(node.name);
    const registered = agent !== undefined && visibleTo(agent, tenant) && agentNodeId(agent) === node.id ? agent : undefined;
    const tools = registered && registered.spec.kind === "mcp_server" ? registered.spec.capabilities.map((c) => ({ ref: toolRef(node.id, c.name), name: c.name, description: c.description })) : [];
    entries.set(node.id, { ref: node.id, kind: node.kind, name: node.name, version: node.version, state: node.state, spec: registered?.spec ?? null, tools });
    const deps: string[] = [];
    for (const m of registered ? modelsOf(registered.spec) : []) {
      models.set(m.ref, m);
      deps.push(m.ref);
    }
    dependsOn.set(node.id, deps);
    for (const t of tools) dependsOn.set(t.ref, []);
  }
  for (const e of graph.edges) {
    const target = entries.get(e.to);
    // A tool reached through a server's capability depends on that very tool of the server.
    const nested = e.capability !== null ? target?.tools.find((t) => t.name === e.capability) : undefined;
    const to = nested?.ref ?? e.to;
    const list = dependsOn.get(e.from);
    if (list && !list.includes(to)) list.push(to);
  }
  for (const m of models.values()) dependsOn.set(m.ref, []);
  return { root: rootRef === null ? null : (entries.get(rootRef) ?? null), entries: [...entries.values()], models: [...models.values()], dependsOn };
}
