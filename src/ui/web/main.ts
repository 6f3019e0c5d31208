/**
 * The operator's web page (docs/ui.md): a hash router over its views. Fleet `#/`, one agent
 * `#/agent/<agent_type>`, the dependency graph `#/graph`, the specs waiting for approval
 * `#/approvals`, the event feed `#/events`. Each view opens its own event stream and
 * closes it when the operator leaves it.
 */
import { loadContext, type Context } from "./api.js";
import { mountAgent } from "./agent.js";
import { mountApprovals } from "./approvals.js";
import { fill, h } from "./dom.js";
import { mountFeed } from "./feed.js";
import { mountFleet } from "./fleet.js";
import { mountGraph } from "./graph-page.js";
import { mountZoneToggle } from "./time-zone.js";

let unmount: (() => void) | null = null;

function route(ctx: Context): void {
  const main = document.getElementById("main")!;
  unmount?.();
  const [path = "/", qs = ""] = location.hash.replace(/^#/, "").split("?", 2);
  const params = new URLSearchParams(qs);
  const agent = /^\/agent\/(.+)$/.exec(path);
  const view = agent ? "agent" : path === "/events" ? "events" : path === "/graph" ? "graph" : path === "/approvals" ? "approvals" : "fleet";
  for (const a of document.querySelectorAll<HTMLAnchorElement>("[data-nav]")) {
    if (a.dataset["nav"] === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (agent) {
    const agentType = decodeURIComponent(agent[1]!);
    document.title = `${agentType} · Agent registry`;
    unmount = mountAgent(main, ctx, agentType);
  } else if (view === "graph") {
    document.title = "Dependency graph · Agent registry";
    unmount = mountGraph(main, ctx, params);
  } else if (view === "approvals") {
    document.title = "Pending approval · Agent registry";
    unmount = mountApprovals(main, ctx, params);
  } else if (view === "events") {
    document.title = "Events · Agent registry";
    unmount = mountFeed(main, ctx, params);
  } else {
    document.title = "Fleet · Agent registry";
    unmount = mountFleet(main, ctx, params);
  }
}

/** What decides whether the view is mounted again on a hash change: its path, or for the graph its whole query. */
function mountKey(): string {
  return location.hash.startsWith("#/graph") ? location.hash : (location.hash.split("?", 1)[0] ?? "");
}

async function boot(): Promise<void> {
  const main = document.getElementById("main")!;
  mountZoneToggle(document.getElementById("tz") as HTMLButtonElement);
  let ctx: Context;
  try {
    ctx = await loadContext();
  } catch (e) {
    fill(main, h("p", { class: "error", role: "alert" }, `The registry did not answer: ${(e as Error).message}. Reload to try again.`));
    return;
  }
  let lastPath = "";
  window.addEventListener("hashchange", () => {
    // A filter change rewrites the query part only: the view stays mounted. The graph view's
    // query is what it draws, so a new one mounts it again.
    const path = mountKey();
    if (path !== lastPath) {
      lastPath = path;
      route(ctx);
      document.getElementById("main")?.focus();
    }
  });
  lastPath = mountKey();
  route(ctx);
}

void boot();
