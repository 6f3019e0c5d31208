/**
 * The dependency graph as a picture (elkjs's layered layout, or quick-layout.ts past QUICK_LAYOUT_ABOVE nodes; drawn as SVG) and, one click away,
 * as a table of the same nodes and edges. Nodes are coloured by state (live, registered,
 * deregistered, missing, version mismatch), with a legend; missing and deregistered ones are
 * drawn dashed, and so are the edges to them. Each node that names an agent type is a link to
 * it. A graph of more than MAX_DRAWN nodes is not drawn (the table still lists it): a larger
 * fleet is drawn by neighbourhood, an agent type's or a tenant's.
 */
import type { PageGraph } from "../shared.js";
import { EventType } from "../../protocol/events.js";
import { agentOf, getJson, openEvents, revisionOf } from "./api.js";
import { badge, fill, h } from "./dom.js";
import { quickLayout } from "./quick-layout.js";
import { coalesced } from "./refresh.js";

/** The most nodes drawn: a layout of more would hold the page for seconds (layout.ts); a larger fleet is shown by tenant or neighbourhood. */
export const MAX_DRAWN = 2000;
/** Past this many nodes, quick-layout.ts rather than elkjs (layout.ts). */
const QUICK_LAYOUT_ABOVE = 400;
const SVG = "http://www.w3.org/2000/svg";
const NODE_HEIGHT = 40;
const STATES = ["live", "registered", "version_mismatch", "deregistered", "missing"];

export type GraphQuery = { agent?: string; tenant?: string; depth?: number };
export type GraphView = { el: HTMLElement; stop: () => void };

/** The events that can change a graph: an agent type coming, going or changing state, a dependency lost or back. */
const GRAPH_EVENTS = [EventType.AgentRegistered, EventType.AgentDeregistered, EventType.AgentStatusChanged, EventType.DependencyLost, EventType.DependencyRestored];

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Array<Node | string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

const label = (n: PageGraph["nodes"][number]): string => `${n.name}@${n.version}`;
const detail = (n: PageGraph["nodes"][number]): string => `${n.kind} · ${n.state.replace("_", " ")}`;
/** Node width from its longest line: the system font's advance at 12 px is about 8 px bold (the name), 6.5 px regular. */
const widthOf = (n: PageGraph["nodes"][number]): number => Math.max(label(n).length * 8, detail(n).length * 6.5) + 20;

/**
 * The graph of `query`, kept live by an event stream of its own (GRAPH_EVENTS only): redrawn
 * when an event names an agent type among its nodes, or registers one (a missing dependency
 * may have come). `onState` follows the stream's connection (the header's indicator).
 */
export function graphView(query: GraphQuery, heading: string, onState?: (open: boolean) => void): GraphView {
  let minRevision = 0;
  let asTable = false;
  let last: PageGraph | null = null;
  const headingId = `h-graph-${Math.random().toString(36).slice(2, 8)}`;
  const toggle = h("button", { type: "button", class: "graph-toggle", "aria-pressed": "false", onclick: () => ((asTable = !asTable), show()) }, "Show as a table");
  const status = h("p", { class: "muted small graph-status", role: "status" }, "Reading the graph…");
  const picture = h("div", { class: "graph-box" });
  const table = h("div", { class: "scroll graph-table", hidden: true });
  const problems = h("ul", { class: "graph-problems" });
  const legend = h("p", { class: "legend small" }, "Node state: ", ...STATES.flatMap((s) => [badge(s), " "]));
  const el = h("section", { class: "graph", "aria-labelledby": headingId }, h("h3", { id: headingId }, heading), h("div", { class: "graph-bar" }, toggle, legend), status, picture, table, problems);

  function show(): void {
    toggle.textContent = asTable ? "Show as a picture" : "Show as a table";
    toggle.setAttribute("aria-pressed", String(asTable));
    table.hidden = !asTable && (last === null || last.nodes.length <= MAX_DRAWN);
    picture.hidden = asTable;
  }

  function renderTable(g: PageGraph): void {
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

  async function renderPicture(g: PageGraph): Promise<void> {
    if (g.nodes.length > MAX_DRAWN) {
      fill(picture, h("p", { class: "muted" }, `${g.nodes.length} nodes: too many to draw at once. The table below lists them; open an agent type for the graph around it, or choose a tenant.`));
      return;
    }
    if (g.nodes.length === 0) {
      fill(picture, h("p", { class: "muted" }, "No dependencies here."));
      return;
    }
    // Past QUICK_LAYOUT_ABOVE nodes, elkjs would hold the page for over a second (and load 1.5 MB
    // the first time): the linear-time layout draws the whole shape at once instead.
    const layoutGraph = g.nodes.length > QUICK_LAYOUT_ABOVE ? quickLayout : (await import("./layout.js")).layoutGraph;
    const byId = new Map(g.nodes.map((n) => [n.id, n]));
    // An edge to a node the reply left out (a graph cut to fit) cannot be laid out.
    const edges = g.edges.map((e, i) => ({ id: `e${i}`, from: e.from, to: e.to })).filter((e) => byId.has(e.from) && byId.has(e.to));
    const targetOf = new Map(edges.map((e) => [e.id, e.to]));
    const laid = await layoutGraph(
      g.nodes.map((n) => ({ id: n.id, width: widthOf(n), height: NODE_HEIGHT })),
      edges,
    );
    const drawn = svg(
      "svg",
      { width: Math.ceil(laid.width), height: Math.ceil(laid.height), viewBox: `0 0 ${Math.ceil(laid.width)} ${Math.ceil(laid.height)}`, role: "img", "aria-label": `Dependency graph, ${g.nodes.length} nodes: the table alternative is one click away` },
      svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "ge-head" }))),
    );
    for (const e of laid.edges) {
      const target = byId.get(targetOf.get(e.id) ?? "");
      const broken = target !== undefined && (target.state === "missing" || target.state === "deregistered");
      if (e.points.length > 1) drawn.append(svg("path", { d: e.points.map((p, i) => `${i === 0 ? "M" : "L"} ${p.x} ${p.y}`).join(" "), class: broken ? "ge ge-broken" : "ge", "marker-end": "url(#arrow)" }));
    }
    for (const p of laid.nodes) {
      const n = byId.get(p.id);
      if (!n) continue;
      const box = svg(
        "g",
        { class: `gn gn-${n.state}${n.name === g.root ? " gn-root" : ""}`, "data-node": n.id, "data-state": n.state, transform: `translate(${p.x} ${p.y})` },
        svg("title", {}, `${label(n)}: ${detail(n)}`),
        svg("rect", { width: p.width, height: p.height, rx: 6 }),
        svg("text", { x: 10, y: 16, class: "gn-name" }, label(n)),
        svg("text", { x: 10, y: 32, class: "gn-detail" }, detail(n)),
      );
      // A missing dependency names no agent type the registry holds: nothing to open.
      drawn.append(n.state === "missing" ? box : svg("a", { href: `#/agent/${encodeURIComponent(n.name)}`, "aria-label": `${label(n)}, ${detail(n)}` }, box));
    }
    fill(picture, drawn);
  }

  async function load(): Promise<void> {
    try {
      const g = await getJson<PageGraph>("graph", { agent: query.agent, tenant: query.tenant, depth: query.depth, min_revision: minRevision || undefined });
      last = g;
      status.textContent = `${g.nodes.length} nodes, ${g.edges.length} edges${g.tenant ? ` (tenant ${g.tenant})` : ""}`;
      fill(problems, ...g.problems.slice(0, 20).map((p) => h("li", { class: p.severity === "error" ? "error" : "muted" }, `${p.code}: ${p.message}`)));
      renderTable(g);
      await renderPicture(g);
      show();
    } catch (e) {
      status.textContent = `The dependency graph could not be read: ${(e as Error).message}`;
    }
  }

  const refresh = coalesced(load);
  const events = openEvents(
    { types: GRAPH_EVENTS.join(",") },
    (e) => {
      const agent = agentOf(e);
      const shown = last === null || e.type === EventType.AgentRegistered || (agent !== undefined && last.nodes.some((n) => n.name === agent));
      if (!shown) return;
      minRevision = Math.max(minRevision, revisionOf(e) ?? 0);
      refresh();
    },
    onState,
  );
  refresh();
  return { el, stop: () => events.close() };
}
