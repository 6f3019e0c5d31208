/**
 * The approvals view (`#/approvals`): the specs the approval gate holds for an operator
 * (docs/trust.md), every tenant's, one page (100) at a time through `registry.approval.pending`
 * (the list `agent-registry pending` prints), or with `?state=rejected` the rejected ones with
 * who rejected them and why, or with `?state=withheld` the specs trust withholds (no longer
 * verified under their tenant's `require`) with the reason. Live: every stored event re-reads the page shown, asking for at
 * least the event's revision, so a spec approved with the CLI leaves the list without a reload.
 */
import type { ApprovalRow, ApprovalsPage } from "../shared.js";
import { getJson, openEvents, revisionOf, type Context } from "./api.js";
import { approvalColumns, approvalRow, type ListedState } from "./approval-row.js";
import { fill, h, tickTimes } from "./dom.js";
import { setLive } from "./live.js";
import { coalesced } from "./refresh.js";

const STATES = [
  ["pending", "waiting for approval"],
  ["rejected", "rejected"],
  ["withheld", "withheld by trust"],
] as const;

const TITLES: Record<ListedState, string> = { pending: "Pending approval", rejected: "Rejected specs", withheld: "Withheld by trust" };
const EMPTY: Record<ListedState, string> = { pending: "Nothing waits for approval.", rejected: "No rejected specs.", withheld: "No spec is withheld by trust." };
const COUNTED: Record<ListedState, [string, string]> = { pending: ["spec", "waiting for approval"], rejected: ["rejected spec", ""], withheld: ["spec", "withheld by trust"] };

function listedState(value: string | null): ListedState {
  return value === "rejected" || value === "withheld" ? value : "pending";
}

/** What the gate is and why this page only shows the commands: deciding takes the operator's credentials. */
function gateExplanation(): HTMLElement {
  return h(
    "p",
    {},
    "Specs of agent types whose tenant (or the shared agents) is under approval ",
    h("code", {}, "manual"),
    " in the trust file: no query routes to them, their instances included, until an operator approves them. This page cannot decide; run the command shown with the operator's credentials (",
    h("code", {}, "--user operator"),
    " under auth.conf). Specs withheld by trust are listed too: signed specs of a tenant whose mode is ",
    h("code", {}, "require"),
    " whose signatures no longer verify (a key revoked or rotated), routed again once signed by a key the tenant trusts.",
  );
}

export function mountApprovals(root: HTMLElement, ctx: Context, params: URLSearchParams): () => void {
  const state = { state: listedState(params.get("state")), cursors: [""] as string[], next: null as string | null };
  let rows: ApprovalRow[] = [];
  let minRevision = 0;

  const select = h("select", { id: "a-state", onchange: () => ((state.state = listedState(select.value)), restart()) }, ...STATES.map(([v, label]) => h("option", { value: v, selected: v === state.state }, label)));
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
    const shown = state.state;
    title.textContent = TITLES[shown];
    fill(head, h("tr", {}, ...approvalColumns(shown).map((c) => h("th", { scope: "col" }, c))));
    fill(body, ...rows.map((r) => approvalRow(r, shown, now)));
    if (rows.length === 0) body.append(h("tr", {}, h("td", { colspan: approvalColumns(shown).length, class: "muted" }, EMPTY[shown])));
    const n = rows.length;
    const [noun, tail] = COUNTED[shown];
    summary.textContent = `${n}${state.next ? "+" : ""} ${noun}${n === 1 ? "" : "s"}${tail ? ` ${tail}` : ""}`;
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
    history.replaceState(null, "", state.state === "pending" ? "#/approvals" : `#/approvals?state=${state.state}`);
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
