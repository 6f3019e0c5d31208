/**
 * The agent page's lists of what an agent depends on and what uses it, one step each way, with
 * the graph's problems; a read that fails says so in place of the lists.
 */
import type { GraphNeighbour, NeighboursReply } from "../shared.js";
import { getJson } from "./api.js";
import { badge, fill, h } from "./dom.js";

function neighbourItem(n: GraphNeighbour): HTMLElement {
  return h("li", { "data-node": n.name }, n.kind === "agent" || n.kind === "mcp_server" || n.kind === "tool" ? h("a", { href: `#/agent/${encodeURIComponent(n.name)}` }, n.name) : n.name, ` ${n.version} `, badge(n.state));
}

function neighbourList(title: string, id: string, nodes: GraphNeighbour[]): HTMLElement[] {
  return [h("h4", {}, title), nodes.length === 0 ? h("p", { class: "muted", id }, "none") : h("ul", { id }, ...nodes.map(neighbourItem))];
}

export async function loadDependencies(graph: HTMLElement, agentType: string, minRevision: number): Promise<void> {
  try {
    const g = await getJson<NeighboursReply>(`agents/${encodeURIComponent(agentType)}/graph`, { min_revision: minRevision || undefined });
    fill(
      graph,
      h("h3", { id: "h-graph" }, "Dependencies"),
      ...neighbourList("Depends on", "depends-on", g.dependencies),
      ...neighbourList("Used by", "used-by", g.dependents),
      ...g.problems.map((p) => h("p", { class: p.severity === "error" ? "error" : "muted" }, `${p.code}: ${p.message}`)),
    );
  } catch (e) {
    fill(graph, h("h3", { id: "h-graph" }, "Dependencies"), h("p", { class: "muted" }, `The dependency graph could not be read: ${(e as Error).message}`));
  }
}
