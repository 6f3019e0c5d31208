/**
 * The facts block of the agent page: status (or the approval gate's hold), the spec's fields,
 * when it registered and last heartbeat, and links to its exported card and tool spec.
 */
import type { AgentView } from "../../protocol/messages.js";
import { absTime, badge, fill, h, time } from "./dom.js";
import { approvalBadge, approvalNote, deprecatedBadge, withheldNote } from "./approval-badge.js";
import { deprecationText, holdOf } from "../shared.js";

export function renderAgentFacts(facts: HTMLElement, a: AgentView, now: number): void {
  const shared = a.tenant_scope === null;
  // A spec the approval gate holds, or trust withholds, is not exported: the card and tool spec answer 404 (docs/trust.md).
  const hold = holdOf(a);
  const lapse = !a.trust.verified && a.trust.lapse?.state === "withheld" ? a.trust.lapse : undefined;
  const deprecated = deprecationText(a.deprecated);
  const path = `/agents/${encodeURIComponent(a.agent_type)}`;
  fill(
    facts,
    approvalNote(a),
    lapse ? withheldNote(a, lapse) : null,
    h("p", {}, hold ? approvalBadge(hold) : badge(a.status), " ", deprecated ? deprecatedBadge(deprecated) : null, deprecated ? " " : null, a.display_name ?? null, a.display_name ? " — " : null, a.description),
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
      ...(deprecated ? [h("dt", {}, "Deprecated"), h("dd", { id: "deprecated" }, deprecated, " ", absTime(a.deprecated?.at ?? null))] : []),
      h("dt", {}, "Registered"),
      h("dd", {}, absTime(a.registered_at)),
      h("dt", {}, "Last heartbeat"),
      h("dd", { id: "last-heartbeat" }, time(a.last_heartbeat, now), a.last_heartbeat ? " · " : null, a.last_heartbeat ? absTime(a.last_heartbeat) : null),
    ),
    hold
      ? null
      : shared
      ? h("p", { class: "links" }, h("a", { href: `${path}/agent-card.json` }, "A2A agent card"), " · ", h("a", { href: `${path}/toolspec.json` }, "MCP tool spec"))
      : h("p", { class: "muted" }, "A tenant's agent: its card and tool spec are exported over NATS only."),
  );
}
