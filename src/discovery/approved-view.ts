/**
 * The discovery front lists what coordinators may route to, so an agent whose spec waits for
 * an operator's approval, or was rejected (v1.2, docs/trust.md "The approval gate"), is no
 * entry of its catalog: the registry's `list` and `get` show such a spec (with its `approval`)
 * to operators, and the front leaves it out. A view without `approval` is approved (policy auto).
 */
import type { AgentView } from "../protocol/messages.js";

export function isApprovedView(view: AgentView): boolean {
  return view.approval === undefined || view.approval.state === "approved";
}
