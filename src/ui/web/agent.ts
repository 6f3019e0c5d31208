/**
 * One agent type: its spec (capabilities with their schemas), its instances with a countdown to
 * each one's eviction deadline (last heartbeat + missed_heartbeats x its interval), its recent
 * events from the stream (live, heartbeats included), its history from the audit mirror when
 * one runs, and links to its A2A card and tool spec exports.
 */
import type { AgentView, GetReply } from "../../protocol/messages.js";
import { ApiError, getJson, openEvents, revisionOf, type Context, type FeedEvent } from "./api.js";
import { fill, h, tickTimes } from "./dom.js";
import { eventLine } from "./event-line.js";
import { graphView } from "./graph-view.js";
import { setLive } from "./live.js";
import { coalesced } from "./refresh.js";
import { renderAgentFacts } from "./agent-facts.js";
import { applyHeartbeat, renderInstances, tickInstances } from "./agent-instances.js";
import { renderCapabilities } from "./agent-capabilities.js";
import { loadDependencies } from "./agent-dependencies.js";
import { loadHistory } from "./agent-history.js";

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

  async function load(): Promise<void> {
    try {
      const got = await getJson<GetReply>(`agents/${encodeURIComponent(agentType)}`, { min_revision: minRevision || undefined });
      const first = agent === null;
      agent = got.agent;
      renderAgentFacts(facts, agent, ctx.now());
      renderInstances(instances, agent, ctx);
      // Rebuilt only when the spec may have changed, so open <details> stay open.
      if (first || capabilities.dataset["version"] !== agent.version) {
        renderCapabilities(capabilities, agent);
        capabilities.dataset["version"] = agent.version;
      }
      void loadDependencies(graph, agentType, minRevision);
    } catch (e) {
      fill(facts, h("p", { class: "error", role: "alert" }, e instanceof ApiError && e.status === 404 ? `No agent type ${agentType}.` : `Could not read ${agentType}: ${(e as Error).message}`));
    }
  }

  const refresh = coalesced(load);
  const events = openEvents(
    { agent: agentType, since: "24h", heartbeats: "1" },
    (e) => {
      recent.unshift(e);
      if (recent.length > MAX_EVENTS) recent.pop();
      eventList.prepend(eventLine(e, ctx.now()));
      while (eventList.children.length > MAX_EVENTS) eventList.lastElementChild?.remove();
      if (agent && applyHeartbeat(agent, e)) {
        renderInstances(instances, agent, ctx);
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
    if (agent) tickInstances(instances, agent, ctx);
  }, 1000);
  refresh();
  void loadHistory(history, agentType, ctx);
  return () => {
    events.close();
    picture.stop();
    clearInterval(tick);
  };
}
