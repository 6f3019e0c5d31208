package agentregistry

import (
	"context"
	"fmt"
)

// Deprecation of an agent type (protocol v1.2, docs/trust.md "Deprecation"): an operator's
// warning that the type is on its way out. It stays routable; every answer that shows it
// carries Deprecated, and a tie goes to a type that is not deprecated. The operators'
// subjects are registry.approval.deprecate.<type> and .undeprecate.<type>, under no tenant
// whatever the client's.

// The deprecation event types (v1.2); their data reads as DeprecationData.
const (
	EventAgentDeprecated   = "registry.agent.deprecated"
	EventAgentUndeprecated = "registry.agent.undeprecated"
)

// DeprecationView is an operator's deprecation as replies show it: who, when (RFC 3339), why,
// and the agent type to use instead (Reason and Successor empty when not given).
type DeprecationView struct {
	By        string `json:"by"`
	At        string `json:"at"`
	Reason    string `json:"reason,omitempty"`
	Successor string `json:"successor,omitempty"`
}

// DeprecateRequest is the body of registry.approval.deprecate.<agent_type>. Version and
// Revision name what was reviewed, as for ApproveRequest.
type DeprecateRequest struct {
	By        string `json:"by"`
	Reason    string `json:"reason,omitempty"`
	Successor string `json:"successor,omitempty"`
	Version   string `json:"version,omitempty"`
	Revision  uint64 `json:"revision,omitempty"`
}

// UndeprecateRequest is the body of registry.approval.undeprecate.<agent_type>.
type UndeprecateRequest struct {
	By       string `json:"by"`
	Reason   string `json:"reason,omitempty"`
	Version  string `json:"version,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
}

// DeprecationReply answers Deprecate and Undeprecate: Deprecated is nil once withdrawn.
type DeprecationReply struct {
	AgentType   string           `json:"agent_type"`
	Version     string           `json:"version"`
	TenantScope *string          `json:"tenant_scope"`
	Deprecated  *DeprecationView `json:"deprecated"`
	Revision    uint64           `json:"revision"`
}

// DeprecationData is the data of the deprecation events; Reason and Successor are nil when none.
type DeprecationData struct {
	AgentType   string  `json:"agent_type"`
	Version     string  `json:"version"`
	TenantScope *string `json:"tenant_scope"`
	Deprecated  bool    `json:"deprecated"`
	By          string  `json:"by"`
	Reason      *string `json:"reason"`
	Successor   *string `json:"successor"`
	Revision    uint64  `json:"revision"`
}

// Deprecate deprecates an agent type, saying why and what to use instead; it stays routable.
// A *Error with CodeConflict when the stored spec is not the one named or the same deprecation
// is there already; CodeInvalidRequest for a successor that is no agent type (checked before
// sending) or the type itself; CodeNotFound for an unknown type.
func (c *Client) Deprecate(ctx context.Context, agentType string, req DeprecateRequest) (*DeprecationReply, error) {
	if req.Successor != "" && !agentTypeRE.MatchString(req.Successor) {
		return nil, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("successor %q is not an agent type (%s)", req.Successor, agentTypeRE)}
	}
	return operatorCall[DeprecationReply](ctx, c, "approval", "deprecate", agentTypeToken(agentType), req)
}

// Undeprecate withdraws an agent type's deprecation; CodeConflict when it is not deprecated.
func (c *Client) Undeprecate(ctx context.Context, agentType string, req UndeprecateRequest) (*DeprecationReply, error) {
	return operatorCall[DeprecationReply](ctx, c, "approval", "undeprecate", agentTypeToken(agentType), req)
}
