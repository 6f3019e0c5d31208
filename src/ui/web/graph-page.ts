/**
 * The graph view (`#/graph`): the whole fleet's dependency graph, or a tenant's, or the
 * neighbourhood of one agent type (`?agent=`, `depth` steps each way). Redrawn live
 * (graph-view.ts), so a dependency lost at runtime shows as it happens.
 */
import type { Context } from "./api.js";
import { fill, h } from "./dom.js";
import { graphView } from "./graph-view.js";
import { setLive } from "./live.js";

export function mountGraph(root: HTMLElement, _ctx: Context, params: URLSearchParams): () => void {
  const agent = params.get("agent") ?? "";
  const tenant = params.get("tenant") ?? "";
  const depth = params.get("depth") ?? "2";
  const agentInput = h("input", { id: "g-agent", type: "search", value: agent, placeholder: "whole fleet", autocomplete: "off" });
  const tenantInput = h("input", { id: "g-tenant", type: "search", value: tenant, placeholder: "shared agents only", autocomplete: "off" });
  const depthSelect = h("select", { id: "g-depth" }, ...["1", "2", "3", "4", "6", "8", "16"].map((d) => h("option", { value: d, selected: d === depth }, d)));
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const q = new URLSearchParams();
        if (agentInput.value.trim()) q.set("agent", agentInput.value.trim());
        if (tenantInput.value.trim()) q.set("tenant", tenantInput.value.trim());
        q.set("depth", depthSelect.value);
        // Another query: the route mounts the view again (main.ts compares the whole hash here).
        location.hash = `#/graph?${q.toString()}`;
      },
    },
    h("label", { for: "g-agent" }, "Around agent type"),
    agentInput,
    h("label", { for: "g-depth" }, "Steps each way"),
    depthSelect,
    h("label", { for: "g-tenant" }, "Tenant"),
    tenantInput,
    h("button", { type: "submit" }, "Draw"),
  );
  const view = graphView(
    { ...(agent ? { agent } : {}), ...(tenant ? { tenant } : {}), depth: Number(depth) },
    agent ? `Around ${agent}` : tenant ? `Tenant ${tenant}: the whole graph` : "The whole fleet",
    setLive,
  );
  fill(root, h("h2", {}, "Dependency graph"), form, view.el);
  return () => view.stop();
}
