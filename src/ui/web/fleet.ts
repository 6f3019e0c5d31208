/**
 * The fleet view: every agent type, one page (100) at a time through `list`, filtered by status
 * and kind, or the agent types a keyword `search` finds. Every stored event refreshes the page
 * shown (at most one read in flight, asking for at least the event's revision), so changes
 * show within a second without reloading; relative times tick every second.
 */
import type { FleetPage, FleetRow, SearchPage } from "../shared.js";
import { getJson, openEvents, revisionOf, type Context } from "./api.js";
import { fill, h, tickTimes } from "./dom.js";
import { setLive } from "./live.js";
import { coalesced } from "./refresh.js";
import { summaryStrip } from "./summary-strip.js";
import { charts } from "./charts.js";
import { fleetRow } from "./fleet-row.js";

/** "" is the registry's default (live agent types); "all" adds the deregistered ones kept in retention. */
const STATUSES = ["", "all", "ready", "registered", "draining", "deregistered"];
const STATUS_LABELS: Record<string, string> = { "": "live (any status)", all: "all, deregistered too" };
const ALL_STATUSES = "ready,registered,draining,deregistered";
const KINDS = ["", "agent", "mcp_server", "tool"];

type FleetState = { status: string; kind: string; q: string; cursors: string[]; next: string | null };

/** The filter form: status and kind apply at once, the search on submit; each change sets `state` and calls `restart`. */
function filtersForm(state: FleetState, restart: () => void): HTMLFormElement {
  const status = h("select", { id: "f-status", onchange: () => ((state.status = status.value), restart()) }, ...STATUSES.map((s) => h("option", { value: s, selected: s === state.status }, STATUS_LABELS[s] ?? s)));
  const kind = h("select", { id: "f-kind", onchange: () => ((state.kind = kind.value), restart()) }, ...KINDS.map((k) => h("option", { value: k, selected: k === state.kind }, k || "any kind")));
  const search = h("input", { id: "f-search", type: "search", value: state.q, placeholder: "capability, skill, keyword…", autocomplete: "off" });
  return h(
    "form",
    { class: "filters", role: "search", onsubmit: (e: Event) => (e.preventDefault(), (state.q = search.value.trim()), restart()) },
    h("label", { for: "f-status" }, "Status"),
    status,
    h("label", { for: "f-kind" }, "Kind"),
    kind,
    h("label", { for: "f-search" }, "Search"),
    search,
    h("button", { type: "submit" }, "Search"),
  );
}

/** The rows `state` asks for: a keyword search's matches (one page), or a page of the list from the last cursor. */
async function readFleet(state: FleetState, minRevision: number): Promise<{ rows: FleetRow[]; next: string | null }> {
  const min = minRevision || undefined;
  if (state.q) {
    const found = await getJson<SearchPage>("search", { q: state.q, min_revision: min });
    return { rows: found.agents, next: null };
  }
  const cursor = state.cursors[state.cursors.length - 1];
  const got = await getJson<FleetPage>("agents", { status: state.status === "all" ? ALL_STATUSES : state.status, kind: state.kind, cursor, min_revision: min });
  return { rows: got.agents, next: got.next_cursor };
}

export function mountFleet(root: HTMLElement, ctx: Context, params: URLSearchParams): () => void {
  const state: FleetState = { status: params.get("status") ?? "", kind: params.get("kind") ?? "", q: params.get("q") ?? "", cursors: [""], next: null };
  let rows: FleetRow[] = [];
  let minRevision = 0;

  const form = filtersForm(state, () => restart());
  const summary = h("p", { id: "fleet-summary", class: "muted", role: "status" });
  const body = h("tbody");
  const table = h(
    "table",
    { class: "fleet" },
    h("caption", { class: "sr-only" }, "Agent types"),
    h("thead", {}, h("tr", {}, ...["Agent type", "Status", "Kind", "Version", "Ready / total", "Last heartbeat", "Heard at", "Tenant", "Owner"].map((c) => h("th", { scope: "col" }, c)))),
    body,
  );
  const prev = h("button", { type: "button", onclick: () => page(-1) }, "← Previous");
  const next = h("button", { type: "button", onclick: () => page(1) }, "Next →");
  const pager = h("nav", { class: "pager", "aria-label": "Pages" }, prev, next);
  const chart = charts();
  const strip = summaryStrip(chart.sample);
  fill(root, h("h2", {}, "Fleet"), strip.el, chart.el, form, summary, h("div", { class: "scroll" }, table), pager);

  function render(): void {
    const now = ctx.now();
    fill(body, ...rows.map((r) => fleetRow(r, now)));
    if (rows.length === 0) body.append(h("tr", {}, h("td", { colspan: 9, class: "muted" }, state.q ? "Nothing matches." : "No agent types.")));
    const pageNo = state.cursors.length;
    summary.textContent = state.q ? `${rows.length} agent types match “${state.q}”` : `Page ${pageNo}: ${rows.length} agent types`;
    prev.disabled = state.q !== "" || pageNo <= 1;
    next.disabled = state.q !== "" || state.next === null;
  }

  async function load(): Promise<void> {
    try {
      const got = await readFleet(state, minRevision);
      rows = got.rows;
      state.next = got.next;
      render();
    } catch (e) {
      summary.textContent = `Could not read the fleet: ${(e as Error).message}`;
    }
  }

  function restart(): void {
    state.cursors = [""];
    const q = new URLSearchParams();
    for (const k of ["status", "kind", "q"] as const) if (state[k]) q.set(k, state[k]);
    history.replaceState(null, "", `#/${q.toString() ? `?${q.toString()}` : ""}`);
    refresh();
  }

  function page(step: number): void {
    if (step > 0 && state.next !== null) state.cursors.push(state.next);
    if (step < 0 && state.cursors.length > 1) state.cursors.pop();
    refresh();
    root.querySelector("table")?.scrollIntoView({ block: "start" });
  }

  const refresh = coalesced(load);
  const events = openEvents(
    {},
    (e) => {
      minRevision = Math.max(minRevision, revisionOf(e) ?? 0);
      refresh();
      strip.refresh();
    },
    setLive,
  );
  const tick = setInterval(() => tickTimes(body, ctx.now()), 1000);
  refresh();
  return () => {
    events.close();
    clearInterval(tick);
    strip.stop();
    chart.stop();
  };
}
