/**
 * The facts block of the agent page: status (or the approval gate's hold), the spec's fields,
 * when it registered and last heartbeat, and links to its exported card and tool spec.
 */
import type { AgentView } from "../../protocol/messages.js";
import { absTime, badge, fill, h, time } from "./dom.js";
import { approvalBadge, approvalNote } from "./approval-badge.js";

export function renderAgentFacts(facts: HTMLElement, a: AgentView, now: number): void {
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
      h("dd", { id: "last-heartbeat" }, time(a.last_heartbeat, now), a.last_heartbeat ? " · " : null, a.last_heartbeat ? absTime(a.last_heartbeat) : null),
    ),
    held
      ? null
      : shared
      ? h("p", { class: "links" }, h("a", { href: `${path}/agent-card.json` }, "A2A agent card"), " · ", h("a", { href: `${path}/toolspec.json` }, "MCP tool spec"))
      : h("p", { class: "muted" }, "A tenant's agent: its card and tool spec are exported over NATS only."),
  );
}
