/**
 * The approvals view (`#/approvals`): the specs the approval gate holds for an operator
 * (docs/trust.md), every tenant's, one page (100) at a time through `registry.approval.pending`
 * (the list `agent-registry pending` prints), or with `?state=rejected` the rejected ones with
 * who rejected them and why. Live: every stored event re-reads the page shown, asking for at
 * least the event's revision, so a spec approved with the CLI leaves the list without a reload.
 */
import type { ApprovalRow, ApprovalsPage } from "../shared.js";
import { getJson, openEvents, revisionOf, type Context } from "./api.js";
import { approvalColumns, approvalRow } from "./approval-row.js";
import { fill, h, tickTimes } from "./dom.js";
import { setLive } from "./live.js";
import { coalesced } from "./refresh.js";

const STATES = [
  ["pending", "waiting for approval"],
  ["rejected", "rejected"],
] as const;

/** What the gate is and why this page only shows the commands: deciding takes the operator's credentials. */
function gateExplanation(): HTMLElement {
  return h(
    "p",
    {},
    "Specs of agent types whose tenant (or the shared agents) is under approval ",
    h("code", {}, "manual"),
    " in the trust file: no query routes to them, their instances included, until an operator approves them. This page cannot decide; run the command shown with the operator's credentials (",
    h("code", {}, "--user operator"),
    " under auth.conf).",
  );
}

export function mountApprovals(root: HTMLElement, ctx: Context, params: URLSearchParams): () => void {
  const state = { state: params.get("state") === "rejected" ? "rejected" : "pending", cursors: [""] as string[], next: null as string | null };
  let rows: ApprovalRow[] = [];
  let minRevision = 0;

  const select = h("select", { id: "a-state", onchange: () => ((state.state = select.value), restart()) }, ...STATES.map(([v, label]) => h("option", { value: v, selected: v === state.state }, label)));
  const title = h("h2", {}, "Pending approval");
  const summary = h("p", { id: "approvals-summary", class: "muted", role: "status" });
  const head = h("thead");
  const body = h("tbody");
  const table = h("table", { class: "approvals" }, h("caption", { class: "sr-only" }, "Specs in the approval gate"), head, body);
  const prev = h("button", { type: "button", onclick: () => page(-1) }, "← Previous");
  const next = h("button", { type: "button", onclick: () => page(1) }, "Next →");
  fill(
    root,
    title,
    gateExplanation(),
    h("form", { class: "filters", onsubmit: (e: Event) => e.preventDefault() }, h("label", { for: "a-state" }, "Show"), select),
    summary,
    h("div", { class: "scroll" }, table),
    h("nav", { class: "pager", "aria-label": "Pages" }, prev, next),
  );

  function render(): void {
    const now = ctx.now();
    const rejected = state.state === "rejected";
    title.textContent = rejected ? "Rejected specs" : "Pending approval";
    fill(head, h("tr", {}, ...approvalColumns(rejected).map((c) => h("th", { scope: "col" }, c))));
    fill(body, ...rows.map((r) => approvalRow(r, rejected, now)));
    if (rows.length === 0) body.append(h("tr", {}, h("td", { colspan: approvalColumns(rejected).length, class: "muted" }, rejected ? "No rejected specs." : "Nothing waits for approval.")));
    const n = rows.length;
    summary.textContent = rejected ? `${n}${state.next ? "+" : ""} rejected spec${n === 1 ? "" : "s"}` : `${n}${state.next ? "+" : ""} spec${n === 1 ? "" : "s"} waiting for approval`;
    prev.disabled = state.cursors.length <= 1;
    next.disabled = state.next === null;
  }

  async function load(): Promise<void> {
    try {
      const got = await getJson<ApprovalsPage>("approvals", { state: state.state, cursor: state.cursors[state.cursors.length - 1], min_revision: minRevision || undefined });
      rows = got.agents;
      state.next = got.next_cursor;
      render();
    } catch (e) {
      summary.textContent = `Could not read the approval gate: ${(e as Error).message}`;
    }
  }

  function restart(): void {
    state.cursors = [""];
    history.replaceState(null, "", state.state === "rejected" ? "#/approvals?state=rejected" : "#/approvals");
    refresh();
  }

  function page(step: number): void {
    if (step > 0 && state.next !== null) state.cursors.push(state.next);
    if (step < 0 && state.cursors.length > 1) state.cursors.pop();
    refresh();
  }

  const refresh = coalesced(load);
  // Every stored event: the approval events (every tenant's reach the page) move specs in and out,
  // registrations and removals change the instances waiting.
  const events = openEvents(
    {},
    (e) => {
      if (e.seq === null) return;
      minRevision = Math.max(minRevision, revisionOf(e) ?? 0);
      refresh();
    },
    setLive,
  );
  const tick = setInterval(() => tickTimes(body, ctx.now()), 1000);
  refresh();
  return () => {
    events.close();
    clearInterval(tick);
  };
}
