/**
 * The lifecycle words of the wire (PROTOCOL.md sections 2, 4 and 5): an instance's status, an
 * agent type's aggregate status, and why an instance left.
 */

export const InstanceStatus = { Registered: "registered", Ready: "ready", Draining: "draining" } as const;
export type InstanceStatus = (typeof InstanceStatus)[keyof typeof InstanceStatus];

export const AgentStatus = { ...InstanceStatus, Deregistered: "deregistered" } as const;
export type AgentStatus = (typeof AgentStatus)[keyof typeof AgentStatus];

/** `graceful`: the instance deregistered itself; `operator`: a whole-type deregister; `evicted`: missed heartbeats. */
export const RemovalReason = { Graceful: "graceful", Evicted: "evicted", Operator: "operator" } as const;
export type RemovalReason = (typeof RemovalReason)[keyof typeof RemovalReason];

/** The instance id of entries loaded from a registry file: they never expire. */
export const STATIC_INSTANCE_ID = "static";

/**
 * v1.2: where a stored spec stands in its tenant's approval gate (docs/trust.md, "The approval
 * gate"). Only `approved` is routable; a spec stored under policy `auto`, or before v1.2, is approved.
 */
export const ApprovalState = { Pending: "pending", Approved: "approved", Rejected: "rejected" } as const;
export type ApprovalState = (typeof ApprovalState)[keyof typeof ApprovalState];
