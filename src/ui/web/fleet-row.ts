/** One agent type's row in the fleet table, the approval gate's hold shown before its instances' status. */
import type { FleetRow } from "../shared.js";
import { absTime, badge, h, time } from "./dom.js";
import { approvalBadge, deprecatedBadge } from "./approval-badge.js";

export function fleetRow(r: FleetRow, now: number): HTMLElement {
  return h(
    "tr",
    { "data-agent": r.agent_type },
    h("th", { scope: "row" }, h("a", { href: `#/agent/${encodeURIComponent(r.agent_type)}` }, r.agent_type), r.deprecated ? " " : null, r.deprecated ? deprecatedBadge(r.deprecated) : null, r.display_name ? h("div", { class: "muted small" }, r.display_name) : null),
    // A spec the approval gate holds is not routed, whatever its instances' status: the badge says so first.
    r.approval
      ? h("td", { "data-col": "status" }, approvalBadge(r.approval), h("div", { class: "muted small" }, `instances ${r.status}, not routed`))
      : h("td", { "data-col": "status" }, badge(r.status)),
    h("td", { "data-col": "kind" }, r.kind),
    h("td", { "data-col": "version" }, r.version),
    r.approval
      ? h("td", { "data-col": "ready", title: r.approval === "withheld" ? "no query routes to these instances while the spec's signatures do not verify" : "no query routes to these instances until the spec is approved" }, h("span", { class: "muted" }, `not routed · ${r.instances}`))
      : h("td", { "data-col": "ready" }, `${r.ready} / ${r.instances}`),
    h("td", { "data-col": "heartbeat" }, time(r.last_heartbeat, now)),
    h("td", { "data-col": "heard-at" }, absTime(r.last_heartbeat)),
    h("td", { "data-col": "tenant" }, r.tenant_scope ?? "shared"),
    h("td", { "data-col": "owner" }, r.owner_team),
  );
}
