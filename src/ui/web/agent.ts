/**
 * One agent type: its spec (capabilities with their schemas), its instances with a countdown to
 * each one's eviction deadline (last heartbeat + missed_heartbeats x its interval), its recent
 * events from the stream (live, heartbeats included), its history from the audit mirror when
 * one runs, and links to its A2A card and tool spec exports.
 */
import type { AgentView, GetReply, InstanceView } from "../../protocol/messages.js";
import type { GraphNeighbour, HistoryReply, NeighboursReply } from "../shared.js";
import { ApiError, getJson, openEvents, revisionOf, type Context, type FeedEvent } from "./api.js";
import { absTime, badge, duration, fill, h, tickTimes, time } from "./dom.js";
import { livenessOf } from "../liveness.js";
import { eventLine } from "./event-line.js";
import { graphView } from "./graph-view.js";
import { setLive } from "./live.js";
import { coalesced } from "./refresh.js";
import { schemaView } from "./schema.js";
import { approvalBadge, approvalNote } from "./approval-badge.js";

const MAX_EVENTS = 200;

export function mountAgent(root: HTMLElement, ctx: Context, agentType: string): () => void {
  let agent: AgentView | null = null;
  let minRevision = 0;
  const recent: FeedEvent[] = [];

  const title = h("h2", {}, agentType);
  const facts = h("div", { id: "agent-facts" }, h("p", { class: "muted" }, "Loading…"));
  const instances = h("section", { id: "instances", "aria-labelledby": "h-instances" });
  const capabilities = h("section", { id: "capabilities", "aria-labelledby": "h-capabilities" });
  const eventList = h("ol", { id: "agent-events", class: "events" });
  const graph = h("section", { id: "graph", "aria-labelledby": "h-graph" }, h("h3", { id: "h-graph" }, "Dependencies"));
  // The picture of the same, two steps each way, live on a stream of its own: the agent's own stream
  // carries its events only, and a dependency two steps away is another agent's.
  const picture = graphView({ agent: agentType, depth: 2 }, "Dependency graph, two steps each way");
  picture.el.id = "agent-graph";
  picture.el.append(h("p", { class: "small" }, h("a", { href: `#/graph?agent=${encodeURIComponent(agentType)}&depth=4` }, "Open in the graph view")));
  const history = h("section", { id: "history", "aria-labelledby": "h-history" }, h("h3", { id: "h-history" }, "History"), h("p", { class: "muted" }, "Asking the audit mirror…"));
  fill(
    root,
    h("p", {}, h("a", { href: "#/" }, "← Fleet")),
    title,
    facts,
    instances,
    capabilities,
    graph,
    picture.el,
    h("section", { "aria-labelledby": "h-recent" }, h("h3", { id: "h-recent" }, "Recent events"), eventList),
    history,
  );

  function renderFacts(a: AgentView): void {
    const shared = a.tenant_scope === null;
    // A spec the approval gate holds is not exported: the card and tool spec answer 404 (docs/trust.md).
    const held = a.approval !== undefined && a.approval.state !== "approved";
    const path = `/agents/${encodeURIComponent(a.agent_type)}`;
    fill(
      facts,
      approvalNote(a),
      h("p", {}, a.approval && a.approval.state !== "approved" ? approvalBadge(a.approval.state) : badge(a.status), " ", a.display_name ?? null, a.display_name ? " — " : null, a.description),
      h(
        "dl",
        { class: "facts" },
        ...[
          ["Version", a.version],
          ["Kind", a.kind],
          ["Owner", a.owner_team],
          ["Tenant", a.tenant_scope ?? "shared"],
          ["Subject", a.nats_subject],
          ["Instances", String(a.instance_count)],
        ].flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
        ...(a.approval ? [h("dt", {}, "Approval"), h("dd", { id: "approval-state" }, a.approval.state, a.approval.by ? ` by ${a.approval.by} ` : null, a.approval.at ? absTime(a.approval.at) : null)] : []),
        h("dt", {}, "Registered"),
        h("dd", {}, absTime(a.registered_at)),
        h("dt", {}, "Last heartbeat"),
        h("dd", { id: "last-heartbeat" }, time(a.last_heartbeat, ctx.now()), a.last_heartbeat ? " · " : null, a.last_heartbeat ? absTime(a.last_heartbeat) : null),
      ),
      held
        ? null
        : shared
        ? h("p", { class: "links" }, h("a", { href: `${path}/agent-card.json` }, "A2A agent card"), " · ", h("a", { href: `${path}/toolspec.json` }, "MCP tool spec"))
        : h("p", { class: "muted" }, "A tenant's agent: its card and tool spec are exported over NATS only."),
    );
  }

  function deadline(i: InstanceView): number {
    return Date.parse(i.last_heartbeat) + ctx.info.missed_heartbeats * i.heartbeat_interval_ms;
  }

  function countdown(i: InstanceView): string {
    if (i.instance_id === "static") return "never (static)";
    const left = deadline(i) - ctx.now();
    return left > 0 ? `in ${duration(left)}` : "overdue";
  }

  /** On time, late (missed one heartbeat) or critical (missed two), by the server's clock; static entries are always on time. */
  function livenessCell(i: InstanceView): HTMLElement {
    const l = i.instance_id === "static" ? "on_time" : livenessOf(ctx.now() - Date.parse(i.last_heartbeat), i.heartbeat_interval_ms);
    return h("span", { class: `badge l-${l}` }, l.replace("_", " "));
  }

  function renderInstances(a: AgentView): void {
    const now = ctx.now();
    fill(
      instances,
      h("h3", { id: "h-instances" }, `Instances (${a.instance_count})`),
      a.instances.length === 0
        ? h("p", { class: "muted" }, "No live instances.")
        : h(
            "div",
            { class: "scroll" },
            h(
              "table",
              {},
              h("thead", {}, h("tr", {}, ...["Instance", "Status", "Liveness", "Version", "Active tasks", "Last heartbeat", "Heard at", "Evicted"].map((c) => h("th", { scope: "col" }, c)))),
              h(
                "tbody",
                {},
                ...a.instances.map((i) =>
                  h(
                    "tr",
                    { "data-instance": i.instance_id },
                    h("th", { scope: "row" }, i.instance_id),
                    h("td", { "data-col": "status" }, badge(i.status)),
                    h("td", { "data-col": "liveness" }, livenessCell(i)),
                    h("td", {}, i.version),
                    h("td", { "data-col": "tasks" }, i.active_tasks),
                    h("td", {}, time(i.last_heartbeat, now)),
                    h("td", { "data-col": "heard-at" }, absTime(i.last_heartbeat)),
                    h("td", { "data-col": "deadline", "data-deadline": String(deadline(i)) }, countdown(i)),
                  ),
                ),
              ),
            ),
          ),
      a.instances_next_cursor ? h("p", { class: "muted" }, `The first ${a.instances.length} of ${a.instance_count} instances.`) : null,
    );
  }

  function renderCapabilities(a: AgentView): void {
    fill(
      capabilities,
      h("h3", { id: "h-capabilities" }, `Capabilities (${a.capabilities.length})`),
      ...a.capabilities.map((c) =>
        h(
          "details",
          { class: "capability", "data-capability": c.name },
          h("summary", {}, h("code", {}, c.name), " — ", c.description),
          c.tags.length > 0 ? h("p", { class: "muted" }, "Tags: ", c.tags.join(", ")) : null,
          schemaView("Input", c.input_schema),
          schemaView("Output", c.output_schema),
        ),
      ),
    );
  }

  async function load(): Promise<void> {
    try {
      const got = await getJson<GetReply>(`agents/${encodeURIComponent(agentType)}`, { min_revision: minRevision || undefined });
      const first = agent === null;
      agent = got.agent;
      renderFacts(agent);
      renderInstances(agent);
      // Rebuilt only when the spec may have changed, so open <details> stay open.
      if (first || capabilities.dataset["version"] !== agent.version) {
        renderCapabilities(agent);
        capabilities.dataset["version"] = agent.version;
      }
      void loadGraph();
    } catch (e) {
      fill(facts, h("p", { class: "error", role: "alert" }, e instanceof ApiError && e.status === 404 ? `No agent type ${agentType}.` : `Could not read ${agentType}: ${(e as Error).message}`));
    }
  }

  async function loadGraph(): Promise<void> {
    const link = (n: GraphNeighbour): HTMLElement =>
      h("li", { "data-node": n.name }, n.kind === "agent" || n.kind === "mcp_server" || n.kind === "tool" ? h("a", { href: `#/agent/${encodeURIComponent(n.name)}` }, n.name) : n.name, ` ${n.version} `, badge(n.state));
    const list = (title: string, id: string, nodes: GraphNeighbour[]): HTMLElement[] => [
      h("h4", {}, title),
      nodes.length === 0 ? h("p", { class: "muted", id }, "none") : h("ul", { id }, ...nodes.map(link)),
    ];
    try {
      const g = await getJson<NeighboursReply>(`agents/${encodeURIComponent(agentType)}/graph`, { min_revision: minRevision || undefined });
      fill(
        graph,
        h("h3", { id: "h-graph" }, "Dependencies"),
        ...list("Depends on", "depends-on", g.dependencies),
        ...list("Used by", "used-by", g.dependents),
        ...g.problems.map((p) => h("p", { class: p.severity === "error" ? "error" : "muted" }, `${p.code}: ${p.message}`)),
      );
    } catch (e) {
      fill(graph, h("h3", { id: "h-graph" }, "Dependencies"), h("p", { class: "muted" }, `The dependency graph could not be read: ${(e as Error).message}`));
    }
  }

  async function loadHistory(): Promise<void> {
    const reply = await getJson<HistoryReply>(`agents/${encodeURIComponent(agentType)}/history`).catch((e: Error): HistoryReply => ({ available: false, reason: e.message }));
    if (!reply.available) {
      fill(history, h("h3", { id: "h-history" }, "History"), h("p", { class: "muted", id: "history-note" }, `${reply.reason}: the recent events above come from the events stream.`));
      return;
    }
    const now = ctx.now();
    fill(
      history,
      h("h3", { id: "h-history" }, "History (audit mirror)"),
      h("ol", { class: "events" }, ...reply.events.map((e) => eventLine(e as unknown as FeedEvent, now))),
      reply.next_cursor ? h("p", { class: "muted" }, "Older entries: `agent-registry` history from the audit mirror.") : null,
    );
  }

  const refresh = coalesced(load);
  const events = openEvents(
    { agent: agentType, since: "24h", heartbeats: "1" },
    (e) => {
      recent.unshift(e);
      if (recent.length > MAX_EVENTS) recent.pop();
      eventList.prepend(eventLine(e, ctx.now()));
      while (eventList.children.length > MAX_EVENTS) eventList.lastElementChild?.remove();
      const hb = agent?.instances.find((i) => e.type === "registry.agent.heartbeat" && i.instance_id === e.data["instance_id"]);
      if (hb) {
        // A heartbeat moves the deadline: the registry stamped it at about the event's time.
        hb.last_heartbeat = e.time;
        if (typeof e.data["status"] === "string") hb.status = e.data["status"] as InstanceView["status"];
        if (typeof e.data["active_tasks"] === "number") hb.active_tasks = e.data["active_tasks"];
        renderInstances(agent!);
        return;
      }
      if (e.seq !== null) {
        minRevision = Math.max(minRevision, revisionOf(e) ?? 0);
        refresh();
      }
    },
    setLive,
  );
  const tick = setInterval(() => {
    tickTimes(root, ctx.now());
    if (agent) for (const i of agent.instances) {
      const tr = instances.querySelector(`tr[data-instance="${CSS.escape(i.instance_id)}"]`);
      const cell = tr?.querySelector('td[data-col="deadline"]');
      if (cell) cell.textContent = countdown(i);
      tr?.querySelector('td[data-col="liveness"]')?.replaceChildren(livenessCell(i));
    }
  }, 1000);
  refresh();
  void loadHistory();
  return () => {
    events.close();
    picture.stop();
    clearInterval(tick);
  };
}
