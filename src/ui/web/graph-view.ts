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
import { MAX_DRAWN, renderGraphPicture } from "./graph-picture.js";
import { renderGraphTable } from "./graph-table.js";
import { coalesced } from "./refresh.js";

const STATES = ["live", "registered", "version_mismatch", "deregistered", "missing"];

export type GraphQuery = { agent?: string; tenant?: string; depth?: number };
export type GraphView = { el: HTMLElement; stop: () => void };

/** The events that can change a graph: an agent type coming, going or changing state, a dependency lost or back. */
const GRAPH_EVENTS = [EventType.AgentRegistered, EventType.AgentDeregistered, EventType.AgentStatusChanged, EventType.DependencyLost, EventType.DependencyRestored];

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

  async function load(): Promise<void> {
    try {
      const g = await getJson<PageGraph>("graph", { agent: query.agent, tenant: query.tenant, depth: query.depth, min_revision: minRevision || undefined });
      last = g;
      status.textContent = `${g.nodes.length} nodes, ${g.edges.length} edges${g.tenant ? ` (tenant ${g.tenant})` : ""}`;
      fill(problems, ...g.problems.slice(0, 20).map((p) => h("li", { class: p.severity === "error" ? "error" : "muted" }, `${p.code}: ${p.message}`)));
      renderGraphTable(table, g);
      await renderGraphPicture(picture, g);
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
