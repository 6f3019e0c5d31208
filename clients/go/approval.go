package agentregistry

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
)

// The approval gate (protocol v1.2, docs/trust.md "The approval gate"): under a tenant's
// policy manual a new or changed spec is stored pending and routed by no query until an
// operator approves it. The operators' subjects are registry.approval.*, under no tenant
// whatever the client's (only the operator role may publish there under auth.conf).

// The approval gate's event types (v1.2); their data reads as AgentEventData with State, By and Reason.
const (
	EventAgentPending  = "registry.agent.pending"
	EventAgentApproved = "registry.agent.approved"
	EventAgentRejected = "registry.agent.rejected"
)

// ApproveRequest is the body of registry.approval.approve.<agent_type>. By names who decides
// (the registry records the operator's word). Version and Revision (the AgentView's, as
// Pending or Get showed it) name what was reviewed: another stored spec is a conflict, so a
// spec replaced meanwhile is never approved unseen.
type ApproveRequest struct {
	By       string `json:"by"`
	Version  string `json:"version,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// RejectRequest is the body of registry.approval.reject.<agent_type>; a rejection says why.
type RejectRequest struct {
	By       string `json:"by"`
	Reason   string `json:"reason"`
	Version  string `json:"version,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
}

// ApprovalReply answers Approve and Reject: the stored spec's approval once the decision is
// written. Pass Revision to MinRevision to see the decision in a query.
type ApprovalReply struct {
	AgentType   string       `json:"agent_type"`
	Version     string       `json:"version"`
	TenantScope *string      `json:"tenant_scope"`
	Approval    ApprovalView `json:"approval"`
	Revision    uint64       `json:"revision"`
}

// PendingRequest filters registry.approval.pending: every tenant's specs unless Tenant names
// one, or SharedOnly asks for the shared agents' (tenant null on the wire); State is
// ApprovalPending (the default when empty), ApprovalRejected, or "withheld" (v1.2: the specs no
// longer verified under their tenant's require, not routed).
type PendingRequest struct {
	Tenant     string
	SharedOnly bool
	State      string
	Page
}

// MarshalJSON writes the protocol's body, where a null tenant means the shared agents.
func (r PendingRequest) MarshalJSON() ([]byte, error) {
	if r.Tenant != "" && r.SharedOnly {
		return nil, errors.New("pending: Tenant and SharedOnly: pick one")
	}
	body := struct {
		Tenant *json.RawMessage `json:"tenant,omitempty"`
		State  string           `json:"state,omitempty"`
		Page
	}{State: r.State, Page: r.Page}
	if r.Tenant != "" || r.SharedOnly {
		tenant := json.RawMessage("null")
		if r.Tenant != "" {
			quoted, err := json.Marshal(r.Tenant)
			if err != nil {
				return nil, err
			}
			tenant = quoted
		}
		body.Tenant = &tenant
	}
	return json.Marshal(body)
}

// PendingReply is one page of the pending list, ordered by agent_type.
type PendingReply struct {
	Agents     []AgentView `json:"agents"`
	NextCursor *string     `json:"next_cursor"`
	Revision   uint64      `json:"revision"`
}

// Approve approves the stored spec of an agent type (pending, or rejected before): it becomes
// routable. A *Error with CodeConflict when the stored spec is not the one named or nothing
// changes (a spec approved already, by policy included); CodeNotFound for an unknown type.
func (c *Client) Approve(ctx context.Context, agentType string, req ApproveRequest) (*ApprovalReply, error) {
	return operatorCall[ApprovalReply](ctx, c, "approval", "approve", agentTypeToken(agentType), req)
}

// Reject rejects the stored spec of an agent type, saying why; an approved one is withdrawn
// from routing. Errors as Approve's.
func (c *Client) Reject(ctx context.Context, agentType string, req RejectRequest) (*ApprovalReply, error) {
	return operatorCall[ApprovalReply](ctx, c, "approval", "reject", agentTypeToken(agentType), req)
}

// Pending returns one page of the specs waiting for a decision (or rejected; see PendingAll).
func (c *Client) Pending(ctx context.Context, req PendingRequest, opts ...QueryOption) (*PendingReply, error) {
	var r PendingReply
	if err := c.queryAt(ctx, c.prefix+".approval.pending", "approval.pending", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// PendingAll yields every spec of Pending, following next_cursor page by page.
func (c *Client) PendingAll(ctx context.Context, req PendingRequest, opts ...QueryOption) iter.Seq2[AgentView, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]AgentView, *string, uint64, error) {
		req.Cursor = cursor
		r, err := c.Pending(ctx, req, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Agents, r.NextCursor, r.Revision, nil
	})
}
