package agentregistry

import (
	"bytes"
	"encoding/json"
)

// Schema is a JSON Schema kept as its JSON text; empty marshals as {} (accepts anything).
type Schema json.RawMessage

// MarshalJSON writes the schema, or {} when it is empty.
func (s Schema) MarshalJSON() ([]byte, error) {
	if len(bytes.TrimSpace(s)) == 0 {
		return []byte("{}"), nil
	}
	return json.RawMessage(s).MarshalJSON()
}

// UnmarshalJSON keeps the schema's text.
func (s *Schema) UnmarshalJSON(b []byte) error {
	*s = append((*s)[:0], b...)
	return nil
}

// Agent kinds (PROTOCOL.md section 10.2).
const (
	KindAgent     = "agent"
	KindMCPServer = "mcp_server"
	KindTool      = "tool"
)

// Statuses of an agent type (aggregate) and of an instance.
const (
	StatusRegistered   = "registered"
	StatusReady        = "ready"
	StatusDraining     = "draining"
	StatusDeregistered = "deregistered"
)

// ToolAnnotations are MCP's tool hints.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Capability is one thing an agent can do (PROTOCOL.md section 3).
type Capability struct {
	Name           string           `json:"name"`
	Description    string           `json:"description"`
	InputSchema    Schema           `json:"input_schema"`
	OutputSchema   Schema           `json:"output_schema"`
	ConfidenceHint *float64         `json:"confidence_hint,omitempty"`
	Tags           []string         `json:"tags,omitempty"`
	Examples       []string         `json:"examples,omitempty"`
	Title          string           `json:"title,omitempty"`
	Annotations    *ToolAnnotations `json:"annotations,omitempty"`
	Meta           map[string]any   `json:"_meta,omitempty"`
	Icons          []map[string]any `json:"icons,omitempty"`
	Execution      map[string]any   `json:"execution,omitempty"`
	MCPExtra       map[string]any   `json:"mcp_extra,omitempty"`
	// EffectiveAnnotations is filled by the registry's replies (v1.2), never sent.
	EffectiveAnnotations *ToolAnnotations `json:"effective_annotations,omitempty"`
}

// ReflectionConfig of an AgentSpec.
type ReflectionConfig struct {
	Enabled   *bool    `json:"enabled,omitempty"`
	MaxRounds int      `json:"max_rounds,omitempty"`
	Criteria  []string `json:"criteria,omitempty"`
	Model     string   `json:"model,omitempty"`
}

// ModelProviderCapabilities of a ModelProvider.
type ModelProviderCapabilities struct {
	Streaming *bool `json:"streaming,omitempty"`
	Tools     *bool `json:"tools,omitempty"`
	Vision    *bool `json:"vision,omitempty"`
	JSONMode  *bool `json:"jsonMode,omitempty"`
}

// ModelProvider names the models an agent uses.
type ModelProvider struct {
	ID           string                     `json:"id"`
	Models       []string                   `json:"models,omitempty"`
	Kind         string                     `json:"kind"`
	Capabilities *ModelProviderCapabilities `json:"capabilities,omitempty"`
	DisplayName  string                     `json:"displayName,omitempty"`
	Description  string                     `json:"description,omitempty"`
}

// Dependency of a spec on another agent, tool or MCP server, at an exact version.
type Dependency struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	Capability string `json:"capability,omitempty"`
}

// AgentSpec is the description an agent registers (PROTOCOL.md section 3). Fields left at
// their zero value are not sent, so the registry applies its defaults; MaxRetries is a
// pointer because 0 is a valid value, TenantScope because its default is null.
type AgentSpec struct {
	AgentType          string            `json:"agent_type"`
	Version            string            `json:"version"`
	Description        string            `json:"description"`
	OwnerTeam          string            `json:"owner_team"`
	Capabilities       []Capability      `json:"capabilities"`
	NATSSubject        string            `json:"nats_subject"`
	ConsumerGroup      string            `json:"consumer_group"`
	SupportedPatterns  []string          `json:"supported_patterns,omitempty"`
	MaxConcurrentTasks int               `json:"max_concurrent_tasks,omitempty"`
	TaskTimeoutMs      int               `json:"task_timeout_ms,omitempty"`
	LLMTimeoutMs       int               `json:"llm_timeout_ms,omitempty"`
	MaxRetries         *int              `json:"max_retries,omitempty"`
	ReflectionConfig   *ReflectionConfig `json:"reflection_config,omitempty"`
	Evaluators         []string          `json:"evaluators,omitempty"`
	Tools              []string          `json:"tools,omitempty"`
	TenantScope        *string           `json:"tenant_scope,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
	Runtime            string            `json:"runtime,omitempty"`
	ACPPort            int               `json:"acp_port,omitempty"`
	URL                string            `json:"url,omitempty"`
	Weight             float64           `json:"weight,omitempty"`
	Providers          []ModelProvider   `json:"providers,omitempty"`
	Depends            []Dependency      `json:"depends,omitempty"`
	Kind               string            `json:"kind,omitempty"`
	DisplayName        string            `json:"display_name,omitempty"`
	// A2ACard is the A2A agent card the spec was built from, kept verbatim.
	A2ACard json.RawMessage `json:"a2a_card,omitempty"`
	// RepresentativeQueries (v1.2, docs/protocol.md section 8).
	RepresentativeQueries []string `json:"representative_queries,omitempty"`
}

// Capability returns the spec's capability of that name.
func (s *AgentSpec) Capability(name string) (Capability, bool) {
	for _, c := range s.Capabilities {
		if c.Name == name {
			return c, true
		}
	}
	return Capability{}, false
}

// InstanceView is one live instance of an agent type.
type InstanceView struct {
	InstanceID          string            `json:"instance_id"`
	Version             string            `json:"version"`
	Status              string            `json:"status"`
	RegisteredAt        string            `json:"registered_at"`
	LastHeartbeat       string            `json:"last_heartbeat"`
	HeartbeatIntervalMs int               `json:"heartbeat_interval_ms"`
	ActiveTasks         int               `json:"active_tasks"`
	Metadata            map[string]string `json:"metadata"`
}

// AgentView is the stored AgentSpec plus what the registry tracks about the agent type.
type AgentView struct {
	AgentSpec
	Status       string `json:"status"`
	RegisteredAt string `json:"registered_at"`
	// UpdatedAt (v1.2) is when the stored spec record last changed; empty from an older registry.
	UpdatedAt           string         `json:"updated_at,omitempty"`
	LastHeartbeat       *string        `json:"last_heartbeat"`
	DeregisteredAt      *string        `json:"deregistered_at,omitempty"`
	Revision            uint64         `json:"revision"`
	InstanceCount       int            `json:"instance_count"`
	Instances           []InstanceView `json:"instances"`
	InstancesNextCursor *string        `json:"instances_next_cursor,omitempty"`
	// Approval (v1.2) is where the stored spec stands in its tenant's approval gate; nil when
	// it was approved by policy auto (docs/trust.md).
	Approval *ApprovalView `json:"approval,omitempty"`
	// Deprecated (v1.2) is set while an operator has deprecated the agent type (docs/trust.md
	// "Deprecation"): still routed, with who, why and the successor to move to.
	Deprecated *DeprecationView `json:"deprecated,omitempty"`
}

// Routable reports whether routing queries may answer with the agent: its spec is approved,
// by policy or by an operator. A client that picks agents from Get or List skips the others.
func (v *AgentView) Routable() bool {
	return v.Approval == nil || v.Approval.State == ApprovalApproved
}

// States of a spec in the approval gate (v1.2); only ApprovalApproved is routable.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
)

// ApprovalView is a spec's approval as replies show it; By, At and Reason once an operator decided.
type ApprovalView struct {
	State  string `json:"state"`
	By     string `json:"by,omitempty"`
	At     string `json:"at,omitempty"`
	Reason string `json:"reason,omitempty"`
}
