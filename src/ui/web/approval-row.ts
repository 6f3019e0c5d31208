/**
 * One spec's row in the approvals view, and the view's columns: a held spec shows when it
 * registered, its signature and both commands; a rejected one who rejected it, when and why,
 * and the command that approves it anyway.
 */
import type { ApprovalRow } from "../shared.js";
import { approvalBadge, approveCommand, commandCode, rejectCommand } from "./approval-badge.js";
import { absTime, h, time } from "./dom.js";

export function approvalColumns(rejected: boolean): string[] {
  return rejected
    ? ["Agent type", "Tenant", "Version", "Owner", "Instances waiting", "Rejected", "Reason", "Approve anyway with"]
    : ["Agent type", "Tenant", "Version", "Owner", "Registered", "Instances waiting", "Signature", "Decide with"];
}

function agentCell(r: ApprovalRow): HTMLElement {
  // The page's `get` asks with no tenant: a tenant's agent has no page here, `agent-registry get --tenant` shows it.
  const name = r.tenant_scope === null ? h("a", { href: `#/agent/${encodeURIComponent(r.agent_type)}` }, r.agent_type) : h("span", { title: `agent-registry get ${r.agent_type} --tenant ${r.tenant_scope}` }, r.agent_type);
  return h("th", { scope: "row" }, name, " ", approvalBadge(r.approval.state), h("div", { class: "muted small" }, r.display_name ?? r.description));
}

export function approvalRow(r: ApprovalRow, rejected: boolean, now: number): HTMLElement {
  return h(
    "tr",
    { "data-agent": r.agent_type },
    agentCell(r),
    h("td", { "data-col": "tenant" }, r.tenant_scope ?? "shared"),
    h("td", { "data-col": "version" }, r.version),
    h("td", { "data-col": "owner" }, r.owner_team),
    rejected ? null : h("td", { "data-col": "registered" }, time(r.registered_at, now), h("div", {}, absTime(r.registered_at))),
    h("td", { "data-col": "instances" }, `${r.instances}`, r.instances > 0 ? h("span", { class: "muted" }, ` (${r.ready} ready)`) : null),
    rejected
      ? h("td", { "data-col": "rejected" }, h("span", { "data-col": "by" }, r.approval.by ?? "?"), h("div", { class: "small" }, absTime(r.approval.at)))
      : h("td", { "data-col": "signature" }, r.verified_by ? `verified (${r.verified_by})` : h("span", { class: "muted" }, "unsigned")),
    rejected ? h("td", { "data-col": "reason", class: "wrap" }, r.approval.reason ?? "") : null,
    h("td", { "data-col": "command", class: "wrap" }, h("div", {}, commandCode(approveCommand(r.agent_type, r.revision))), rejected ? null : h("div", {}, commandCode(rejectCommand(r.agent_type, r.revision)))),
  );
}
