/**
 * The discovery front lists what coordinators may route to, so an agent whose spec waits for
 * an operator's approval, or was rejected (v1.2, docs/trust.md "The approval gate"), is no
 * entry of its catalog: the registry's `list` and `get` show such a spec (with its `approval`)
 * to operators, and the front leaves it out. A view without `approval` is approved (policy auto).
 * So is a spec withheld by trust (v1.2, "When trust roots change": no longer verified under
 * `require`), which no query routes to either.
 */
import type { AgentView } from "../protocol/messages.js";

export function isApprovedView(view: AgentView): boolean {
  // A registry before v1.2 sends no trust member at all.
  const trust = view.trust as AgentView["trust"] | undefined;
  const withheld = trust !== undefined && !trust.verified && trust.lapse?.state === "withheld";
  return (view.approval === undefined || view.approval.state === "approved") && !withheld;
}
