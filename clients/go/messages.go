package agentregistry

import "encoding/json"

// RegisterRequest is the body of registry.register.<agent_type> with an AgentSpec. Send
// CardRegistration, ToolspecRegistration or ServerJSONRegistration bodies through
// Client.RegisterRaw for the other forms.
type RegisterRequest struct {
	Spec                AgentSpec         `json:"spec"`
	InstanceID          string            `json:"instance_id,omitempty"`
	HeartbeatIntervalMs int               `json:"heartbeat_interval_ms,omitempty"`
	Status              string            `json:"status,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Replace             bool              `json:"replace,omitempty"`
}

// RegisterReply answers a registration.
type RegisterReply struct {
	AgentType           string   `json:"agent_type"`
	Version             string   `json:"version"`
	InstanceID          string   `json:"instance_id"`
	Status              string   `json:"status"`
	Revision            uint64   `json:"revision"`
	HeartbeatSubject    string   `json:"heartbeat_subject"`
	HeartbeatIntervalMs int      `json:"heartbeat_interval_ms"`
	EvictAfterMs        int      `json:"evict_after_ms"`
	Warnings            []string `json:"warnings"`
	A2AVersion          string   `json:"a2a_version,omitempty"`
	// Approval (v1.2) is the stored spec's approval when its tenant is under policy manual.
	Approval *ApprovalView `json:"approval,omitempty"`
}

// HeartbeatRequest is the body of a heartbeat; both fields may be left out.
type HeartbeatRequest struct {
	Status      string `json:"status,omitempty"`
	ActiveTasks *int   `json:"active_tasks,omitempty"`
}

// HeartbeatReply answers a heartbeat.
type HeartbeatReply struct {
	Status        string `json:"status"`
	Revision      uint64 `json:"revision"`
	LastHeartbeat string `json:"last_heartbeat,omitempty"`
}

// DeregisterReply answers a deregistration. InstanceID is empty for a whole agent type.
type DeregisterReply struct {
	AgentType    string   `json:"agent_type"`
	InstanceID   *string  `json:"instance_id"`
	AgentRemoved bool     `json:"agent_removed"`
	Revision     uint64   `json:"revision"`
	Instances    []string `json:"instances,omitempty"`
}

// LookupRequest asks for the providers of a capability.
type LookupRequest struct {
	Capability string   `json:"capability"`
	Status     []string `json:"status,omitempty"`
	Version    string   `json:"version,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	ReadOnly   bool     `json:"read_only,omitempty"`
	Limit      int      `json:"limit,omitempty"`
	Cursor     string   `json:"cursor,omitempty"`
}

// Provider is one agent type offering a capability, best first in a LookupReply.
type Provider struct {
	AgentType            string           `json:"agent_type"`
	Kind                 string           `json:"kind"`
	Version              string           `json:"version"`
	NATSSubject          string           `json:"nats_subject"`
	ConsumerGroup        string           `json:"consumer_group"`
	Description          string           `json:"description"`
	InputSchema          Schema           `json:"input_schema"`
	OutputSchema         Schema           `json:"output_schema"`
	ConfidenceHint       *float64         `json:"confidence_hint,omitempty"`
	EffectiveAnnotations *ToolAnnotations `json:"effective_annotations,omitempty"`
	Status               string           `json:"status"`
	ReadyInstances       int              `json:"ready_instances"`
	TenantScope          *string          `json:"tenant_scope"`
	// Deprecated (v1.2) is set while an operator has deprecated the agent type; it is still a provider.
	Deprecated *DeprecationView `json:"deprecated,omitempty"`
}

// LookupReply answers lookup.
type LookupReply struct {
	Capability string     `json:"capability"`
	Providers  []Provider `json:"providers"`
	NextCursor *string    `json:"next_cursor"`
	Revision   uint64     `json:"revision"`
}

// GetReply answers get.
type GetReply struct {
	Agent    AgentView `json:"agent"`
	Revision uint64    `json:"revision"`
}

// ListRequest filters list.
type ListRequest struct {
	Status     []string          `json:"status,omitempty"`
	OwnerTeam  string            `json:"owner_team,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	Capability string            `json:"capability,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	// AgentTypes (protocol v1.2) lists these agent types only, 1 to 100 of them: a batch of
	// Gets in one request. A v1.1 registry ignores it and lists its whole fleet.
	AgentTypes []string `json:"agent_types,omitempty"`
	// InstancesLimit (protocol v1.2) bounds the instances of each agent's view.
	InstancesLimit int    `json:"instances_limit,omitempty"`
	Limit          int    `json:"limit,omitempty"`
	Cursor         string `json:"cursor,omitempty"`
}

// ListReply is one page of list, ordered by agent_type.
type ListReply struct {
	Agents     []AgentView `json:"agents"`
	NextCursor *string     `json:"next_cursor"`
	Revision   uint64      `json:"revision"`
}

// CapabilitiesRequest asks for the capability projection. Schemas false leaves schemas out.
type CapabilitiesRequest struct {
	Status  []string `json:"status,omitempty"`
	Schemas *bool    `json:"schemas,omitempty"`
	Limit   int      `json:"limit,omitempty"`
	Cursor  string   `json:"cursor,omitempty"`
}

// CapabilityEntry is one capability of the projection.
type CapabilityEntry struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Providers    []string `json:"providers"`
	InputSchema  Schema   `json:"input_schema,omitempty"`
	OutputSchema Schema   `json:"output_schema,omitempty"`
}

// CapabilitiesReply is one page of the projection.
type CapabilitiesReply struct {
	Capabilities []CapabilityEntry `json:"capabilities"`
	NextCursor   *string           `json:"next_cursor"`
	Revision     uint64            `json:"revision"`
}

// RouteRequest is the body of route: at least one criterion.
type RouteRequest struct {
	Skill            string   `json:"skill,omitempty"`
	Tags             []string `json:"tags,omitempty"`
	PreferredRuntime string   `json:"preferred_runtime,omitempty"`
}

// RouteCandidate is one scored agent type.
type RouteCandidate struct {
	AgentType  string           `json:"agent_type"`
	Score      float64          `json:"score"`
	Deprecated *DeprecationView `json:"deprecated,omitempty"`
}

// RouteReply answers route.
type RouteReply struct {
	AgentType     string           `json:"agent_type"`
	NATSSubject   string           `json:"nats_subject"`
	ConsumerGroup string           `json:"consumer_group"`
	Version       string           `json:"version"`
	Runtime       *string          `json:"runtime"`
	Score         float64          `json:"score"`
	Candidates    []RouteCandidate `json:"candidates"`
	Revision      uint64           `json:"revision"`
	// Deprecated (v1.2) is set when the chosen agent type is deprecated (a tie goes to one that is not).
	Deprecated *DeprecationView `json:"deprecated,omitempty"`
}

// FindRequest names exactly one of Skill, Tag, Name.
type FindRequest struct {
	Skill  string `json:"skill,omitempty"`
	Tag    string `json:"tag,omitempty"`
	Name   string `json:"name,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// FindReply answers find, ordered by agent_type.
type FindReply struct {
	Agents     []AgentView `json:"agents"`
	NextCursor *string     `json:"next_cursor"`
	Revision   uint64      `json:"revision"`
}

// SearchRequest is a keyword search.
type SearchRequest struct {
	Query    string `json:"query"`
	Limit    int    `json:"limit,omitempty"`
	Kind     string `json:"kind,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// SearchResult is one hit of a search.
type SearchResult struct {
	AgentType  string           `json:"agent_type"`
	Capability string           `json:"capability"`
	Score      float64          `json:"score"`
	Deprecated *DeprecationView `json:"deprecated,omitempty"`
}

// SearchReply answers search.
type SearchReply struct {
	Results  []SearchResult `json:"results"`
	Revision uint64         `json:"revision"`
}

// DiscoverRequest filters discover.
type DiscoverRequest struct {
	Capability string `json:"capability,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	Cursor     string `json:"cursor,omitempty"`
}

// DiscoveredAgent is one entry of discover: status is ready, busy or unavailable.
type DiscoveredAgent struct {
	ID           string          `json:"id"`
	Capabilities []string        `json:"capabilities"`
	Status       string          `json:"status"`
	Providers    []ModelProvider `json:"providers,omitempty"`
	// Deprecated (v1.2) is set while an operator has deprecated the agent type.
	Deprecated *DeprecationView `json:"deprecated,omitempty"`
}

// DiscoverReply answers discover.
type DiscoverReply struct {
	Agents     []DiscoveredAgent `json:"agents"`
	NextCursor *string           `json:"next_cursor"`
	Revision   uint64            `json:"revision"`
}

// CardReply answers card: an A2A Agent Card, kept as JSON.
type CardReply struct {
	Card     json.RawMessage `json:"card"`
	Revision uint64          `json:"revision"`
}

// MCPTool is a capability exported as an MCP tool.
type MCPTool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  Schema           `json:"inputSchema"`
	OutputSchema Schema           `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolspecReply answers toolspec.
type ToolspecReply struct {
	Tools    []MCPTool `json:"tools"`
	Revision uint64    `json:"revision"`
}

// CheckRequest checks a payload against a capability's schema.
type CheckRequest struct {
	Capability string `json:"capability"`
	AgentType  string `json:"agent_type,omitempty"`
	Direction  string `json:"direction,omitempty"`
	Payload    any    `json:"payload"`
}

// CheckReply answers check.
type CheckReply struct {
	Valid     bool    `json:"valid"`
	Errors    []Issue `json:"errors"`
	AgentType string  `json:"agent_type"`
	Version   string  `json:"version"`
	Revision  uint64  `json:"revision"`
}

// GraphRequest asks for a dependency graph.
type GraphRequest struct {
	AgentType string `json:"agent_type,omitempty"`
	Direction string `json:"direction,omitempty"`
	Depth     int    `json:"depth,omitempty"`
}

// GraphNode, GraphEdge and GraphProblem make up a GraphReply.
type GraphNode struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
}

// GraphEdge goes from the one that depends to what it depends on.
type GraphEdge struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Capability *string `json:"capability"`
}

// GraphProblem is a missing dependency, a version mismatch, a cycle...
type GraphProblem struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Path     string `json:"path"`
}

// GraphReply answers graph.
type GraphReply struct {
	Nodes    []GraphNode    `json:"nodes"`
	Edges    []GraphEdge    `json:"edges"`
	Problems []GraphProblem `json:"problems"`
	Revision uint64         `json:"revision"`
}

// SbomRequest asks for a CycloneDX (default) or SPDX document.
type SbomRequest struct {
	Format    string `json:"format,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
}

// SchemaPutRequest stores one version of a named schema.
type SchemaPutRequest struct {
	Version     string `json:"version"`
	Schema      Schema `json:"schema"`
	Description string `json:"description,omitempty"`
}

// SchemaPutReply answers a schema put.
type SchemaPutReply struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Created  bool   `json:"created"`
	Revision uint64 `json:"revision"`
}

// SchemaSummary is one entry of SchemasReply.
type SchemaSummary struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

// SchemasReply answers schemas.
type SchemasReply struct {
	Schemas    []SchemaSummary `json:"schemas"`
	NextCursor *string         `json:"next_cursor"`
	Revision   uint64          `json:"revision"`
}

// SchemaReply answers schema.
type SchemaReply struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Schema      Schema   `json:"schema"`
	Description string   `json:"description"`
	UsedBy      []string `json:"used_by"`
	UsedByCount int      `json:"used_by_count"`
	Revision    uint64   `json:"revision"`
}

// CloudEvent is a registry event (PROTOCOL.md section 5).
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            string          `json:"time"`
	Subject         string          `json:"subject"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
	// Region is the event's home region (v1.2, regional mode only); across regions an event is
	// known by Region and ID together.
	Region string `json:"region,omitempty"`
	// Seq is the stream sequence, set by history.
	Seq uint64 `json:"seq,omitempty"`
}

// AgentEventData is the data of registry.agent.* events; only the fields of its type are set.
type AgentEventData struct {
	AgentType     string  `json:"agent_type"`
	Version       string  `json:"version,omitempty"`
	InstanceID    string  `json:"instance_id"`
	TenantScope   *string `json:"tenant_scope,omitempty"`
	FirstInstance bool    `json:"first_instance,omitempty"`
	SpecChanged   bool    `json:"spec_changed,omitempty"`
	Reason        string  `json:"reason,omitempty"`
	AgentRemoved  bool    `json:"agent_removed,omitempty"`
	From          string  `json:"from,omitempty"`
	To            string  `json:"to,omitempty"`
	Status        string  `json:"status,omitempty"`
	// State and By (v1.2) are set by the approval events (EventAgentPending, EventAgentApproved,
	// EventAgentRejected), with Reason for a decision that gave one.
	State    string `json:"state,omitempty"`
	By       string `json:"by,omitempty"`
	Revision uint64 `json:"revision"`
}
