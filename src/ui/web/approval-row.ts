/**
 * One spec's row in the approvals view, and the view's columns: a held spec shows when it
 * registered, its signature and both commands; a rejected one who rejected it, when and why,
 * and the command that approves it anyway; a spec withheld by trust why its signatures no
 * longer verify, since when, and what routes it again.
 */
import type { ApprovalRow } from "../shared.js";
import { approvalBadge, approveCommand, commandCode, deprecatedBadge, rejectCommand } from "./approval-badge.js";
import { absTime, h, time } from "./dom.js";

/** What the view lists: `registry.approval.pending`'s states. */
export type ListedState = "pending" | "rejected" | "withheld";

export function approvalColumns(state: ListedState): string[] {
  if (state === "rejected") return ["Agent type", "Tenant", "Version", "Owner", "Instances waiting", "Rejected", "Reason", "Approve anyway with"];
  if (state === "withheld") return ["Agent type", "Tenant", "Version", "Owner", "Instances not routed", "Withheld since", "Reason", "Routed again once"];
  return ["Agent type", "Tenant", "Version", "Owner", "Registered", "Instances waiting", "Signature", "Decide with"];
}

function agentCell(r: ApprovalRow, state: ListedState): HTMLElement {
  // The page's `get` asks with no tenant: a tenant's agent has no page here, `agent-registry get --tenant` shows it.
  const name = r.tenant_scope === null ? h("a", { href: `#/agent/${encodeURIComponent(r.agent_type)}` }, r.agent_type) : h("span", { title: `agent-registry get ${r.agent_type} --tenant ${r.tenant_scope}` }, r.agent_type);
  const held = state === "withheld" ? "withheld" : r.approval.state;
  const deprecated = r.deprecated ? [" ", deprecatedBadge(r.deprecated)] : [];
  return h("th", { scope: "row" }, name, " ", approvalBadge(held), ...deprecated, h("div", { class: "muted small" }, r.display_name ?? r.description));
}

/** The cells after the instances: who decided and why, or the signature and the commands, or why trust withholds it. */
function stateCells(r: ApprovalRow, state: ListedState): Array<HTMLElement | null> {
  if (state === "withheld") {
    const w = r.withheld;
    return [
      h("td", { "data-col": "since", class: "small" }, absTime(w?.at ?? null)),
      h("td", { "data-col": "reason", class: "wrap" }, h("code", {}, w?.reason ?? "?"), w?.kid ? ` (key ${w.kid})` : null),
      h("td", { "data-col": "restore", class: "wrap small" }, "signed by a trusted key again"),
    ];
  }
  const rejected = state === "rejected";
  return [
    rejected
      ? h("td", { "data-col": "rejected" }, h("span", { "data-col": "by" }, r.approval.by ?? "?"), h("div", { class: "small" }, absTime(r.approval.at)))
      : h("td", { "data-col": "signature" }, r.verified_by ? `verified (${r.verified_by})` : h("span", { class: "muted" }, "unsigned")),
    rejected ? h("td", { "data-col": "reason", class: "wrap" }, r.approval.reason ?? "") : null,
    h("td", { "data-col": "command", class: "wrap" }, h("div", {}, commandCode(approveCommand(r.agent_type, r.revision))), rejected ? null : h("div", {}, commandCode(rejectCommand(r.agent_type, r.revision)))),
  ];
}

export function approvalRow(r: ApprovalRow, state: ListedState, now: number): HTMLElement {
  return h(
    "tr",
    { "data-agent": r.agent_type },
    agentCell(r, state),
    h("td", { "data-col": "tenant" }, r.tenant_scope ?? "shared"),
    h("td", { "data-col": "version" }, r.version),
    h("td", { "data-col": "owner" }, r.owner_team),
    state === "pending" ? h("td", { "data-col": "registered" }, time(r.registered_at, now), h("div", {}, absTime(r.registered_at))) : null,
    h("td", { "data-col": "instances" }, `${r.instances}`, r.instances > 0 ? h("span", { class: "muted" }, ` (${r.ready} ready)`) : null),
    ...stateCells(r, state),
  );
}
