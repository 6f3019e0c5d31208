/**
 * The approval gate's events (docs/trust.md, "The approval gate"), derived like every other
 * event from the spec record's transition: `registry.agent.pending` when a spec starts waiting
 * for an operator (a new one, or another spec replacing the one that waited), and
 * `registry.agent.approved` / `registry.agent.rejected` when an operator's decision is stored.
 * A registration that keeps the stored spec and its approval causes none, so restarts are quiet.
 */
import { EventType, type ApprovalData } from "../../protocol/events.js";
import { ApprovalState, sameApproval, type Approval } from "../trust/approval-policy.js";
import { sameContent } from "../spec/spec-diff.js";
import type { AgentSpec } from "../spec/spec.js";
import type { DerivedEvent } from "./events.js";

export function approvalEvent(
  agentType: string,
  spec: AgentSpec,
  before: { readonly spec: AgentSpec; readonly approval: Approval | undefined } | undefined,
  after: Approval | undefined,
  revision: number,
): DerivedEvent | undefined {
  if (after === undefined) return undefined;
  const data: ApprovalData = {
    agent_type: agentType,
    version: spec.version,
    tenant_scope: spec.tenant_scope,
    state: after.state,
    by: after.by ?? null,
    reason: after.reason ?? null,
    revision,
  };
  if (after.state === ApprovalState.Pending) {
    const stillWaiting = before?.approval?.state === ApprovalState.Pending && sameContent(before.spec, spec);
    return stillWaiting ? undefined : { type: EventType.AgentPending, subject: agentType, data };
  }
  if (sameApproval(before?.approval, after)) return undefined;
  return { type: after.state === ApprovalState.Approved ? EventType.AgentApproved : EventType.AgentRejected, subject: agentType, data };
}
