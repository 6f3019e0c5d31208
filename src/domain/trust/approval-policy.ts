/**
 * The approval gate (docs/trust.md, "The approval gate"): under a tenant's policy `manual`, a
 * spec the registry has not stored before (a new agent type, or a spec that differs from the
 * stored one) waits, `pending`, for an operator to approve or reject it; only an approved spec
 * is routable. Policy `auto` (the default) approves on registration, as every version before
 * v1.2 did. The record of a spec stored before v1.2, or under `auto`, carries no approval and
 * reads as approved, so nothing changes for a fleet that never sets `manual`.
 */
import { trustAllowsRouting, type TrustLapse } from "./trust-lapse.js";
import { conflict } from "../errors.js";
import { ApprovalState } from "../../protocol/states.js";
import { sameContent } from "../spec/spec-diff.js";
import type { AgentSpec } from "../spec/spec.js";

export { ApprovalState };

export const ApprovalPolicy = { Auto: "auto", Manual: "manual" } as const;
export type ApprovalPolicy = (typeof ApprovalPolicy)[keyof typeof ApprovalPolicy];

/** What a stored spec records of the gate. `by` and `reason` are the operator's words; `at` epoch ms. */
export type Approval = {
  readonly state: ApprovalState;
  readonly by?: string;
  readonly at?: number;
  readonly reason?: string;
};

/**
 * Whether a stored spec may be routed to: its approval absent (auto, static, or before v1.2) or
 * approved, and its trust not withheld (not verified any longer under `require`, trust-standing.ts).
 */
export function isRoutable(agent: { readonly approval?: Approval | undefined; readonly trust_lapse?: TrustLapse | undefined }): boolean {
  const approval = agent.approval;
  return (approval === undefined || approval.state === ApprovalState.Approved) && trustAllowsRouting(agent.trust_lapse);
}

/** What the stored spec record held, as far as the gate reads it. */
export type StoredForApproval = { readonly spec: AgentSpec; readonly static?: boolean; readonly approval?: Approval } | undefined;

/**
 * The approval a registration writes with its spec record (undefined: approved, as under
 * `auto`). A registry-file entry is the operator's own and approved. The same spec registered
 * again keeps its state, whatever the policy: a restart neither approves a pending spec nor
 * clears a rejection, and a tenant moved back to `auto` leaves its pending specs to the
 * operator. Under `manual` any other spec is pending, even when the stored one was approved:
 * the one spec record is what every instance of the type is routed by, so an approval covers
 * the content the operator saw and nothing else.
 */
export function approvalOnRegister(policy: ApprovalPolicy, stored: StoredForApproval, spec: AgentSpec, isStatic: boolean): Approval | undefined {
  if (isStatic) return undefined;
  if (stored !== undefined && stored.static !== true && sameContent(stored.spec, spec)) return stored.approval;
  return policy === ApprovalPolicy.Manual ? { state: ApprovalState.Pending } : undefined;
}

/** Whether two approvals are the same state with the same words (undefined reads as approved by policy). */
export function sameApproval(a: Approval | undefined, b: Approval | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.state === b.state && a.by === b.by && a.at === b.at && a.reason === b.reason;
}

/** An operator's decision on the stored spec of one agent type. */
export type ApprovalDecision = {
  readonly state: typeof ApprovalState.Approved | typeof ApprovalState.Rejected;
  /** Who decided, as the operator's request names it (NATS does not say who sent a message). */
  readonly by: string;
  readonly reason?: string;
  /** The version the operator reviewed: refused if the stored spec is another. */
  readonly version?: string;
};

/**
 * The approval the decision writes, or a 409 naming why it does not apply: the stored spec is
 * another version than the one reviewed, came from the registry file (approved as the
 * operator's own), or is already in the state asked for. Approving a rejected spec (a change of
 * mind) and rejecting an approved one (withdrawing it from routing) are allowed.
 */
export function decide(agentType: string, stored: NonNullable<StoredForApproval>, decision: ApprovalDecision, now: number): Approval {
  if (decision.version !== undefined && decision.version !== stored.spec.version) {
    throw conflict(`${agentType}'s stored spec is version ${stored.spec.version}, not ${decision.version}: review the stored spec and decide on it`);
  }
  if (stored.static === true) throw conflict(`${agentType} comes from the registry file: the operator's own entries are approved`);
  const current = stored.approval?.state ?? ApprovalState.Approved;
  if (current === decision.state) throw conflict(`${agentType} ${stored.spec.version} is already ${current}`);
  return { state: decision.state, by: decision.by, at: now, ...(decision.reason !== undefined ? { reason: decision.reason } : {}) };
}
