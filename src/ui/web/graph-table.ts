/** The dependency graph as a table, the picture's alternative: each node, its state, what it depends on and what depends on it. */
import type { PageGraph } from "../shared.js";
import { badge, fill, h } from "./dom.js";
import { label } from "./graph-picture.js";

export function renderGraphTable(table: HTMLElement, g: PageGraph): void {
  const uses = new Map<string, string[]>();
  const usedBy = new Map<string, string[]>();
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const name = (id: string): string => (byId.has(id) ? label(byId.get(id)!) : id);
  for (const e of g.edges) {
    uses.set(e.from, [...(uses.get(e.from) ?? []), name(e.to)]);
    usedBy.set(e.to, [...(usedBy.get(e.to) ?? []), name(e.from)]);
  }
  fill(
    table,
    h(
      "table",
      {},
      h("caption", { class: "sr-only" }, "Dependency graph: each node, its state, what it depends on and what depends on it"),
      h("thead", {}, h("tr", {}, ...["Node", "Kind", "Version", "State", "Depends on", "Used by"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        {},
        ...g.nodes.map((n) =>
          h(
            "tr",
            { "data-node": n.id },
            h("th", { scope: "row" }, n.state === "missing" ? n.name : h("a", { href: `#/agent/${encodeURIComponent(n.name)}` }, n.name)),
            h("td", {}, n.kind),
            h("td", {}, n.version),
            h("td", { "data-col": "state" }, badge(n.state)),
            h("td", {}, (uses.get(n.id) ?? []).join(", ") || "—"),
            h("td", {}, (usedBy.get(n.id) ?? []).join(", ") || "—"),
          ),
        ),
      ),
    ),
  );
}
