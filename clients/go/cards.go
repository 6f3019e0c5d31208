package agentregistry

import "encoding/json"

// AgentCard is an A2A Agent Card (v1.0 or v0.3) as the registry exports it (PROTOCOL.md
// section 10.3). It names the fields both versions share and those each adds; Decode a
// CardReply into it, or keep CardReply.Card as JSON to pass it on unchanged.
type AgentCard struct {
	Name               string             `json:"name"`
	Description        string             `json:"description"`
	Version            string             `json:"version"`
	ProtocolVersion    string             `json:"protocolVersion,omitempty"`
	URL                string             `json:"url,omitempty"`
	PreferredTransport string             `json:"preferredTransport,omitempty"`
	Provider           *AgentProvider     `json:"provider,omitempty"`
	Capabilities       *AgentCapabilities `json:"capabilities,omitempty"`
	DefaultInputModes  []string           `json:"defaultInputModes,omitempty"`
	DefaultOutputModes []string           `json:"defaultOutputModes,omitempty"`
	Skills             []AgentSkill       `json:"skills"`
	// SupportedInterfaces (v1.0) lists where the agent is reached.
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces,omitempty"`
}

// AgentProvider is who runs an agent.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url,omitempty"`
}

// AgentCapabilities are the optional A2A features an agent supports.
type AgentCapabilities struct {
	Streaming         *bool            `json:"streaming,omitempty"`
	PushNotifications *bool            `json:"pushNotifications,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
}

// AgentExtension is an A2A extension (such as urn:agentgateway:sbom).
type AgentExtension struct {
	URI      string         `json:"uri"`
	Required bool           `json:"required,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
}

// AgentInterface is one way to reach an agent (v1.0).
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// AgentSkill is one skill of a card: one capability of the spec.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
	// InputSchema and OutputSchema are the Registry v2 extensions a card may carry.
	InputSchema  Schema `json:"inputSchema,omitempty"`
	OutputSchema Schema `json:"outputSchema,omitempty"`
}

// Decode reads the reply's card into an AgentCard.
func (r *CardReply) Decode() (*AgentCard, error) {
	var c AgentCard
	if err := json.Unmarshal(r.Card, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Instance holds the fields every register body may add (PROTOCOL.md section 2).
type Instance struct {
	InstanceID          string            `json:"instance_id,omitempty"`
	HeartbeatIntervalMs int               `json:"heartbeat_interval_ms,omitempty"`
	Status              string            `json:"status,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Replace             bool              `json:"replace,omitempty"`
}

// CardRegistration registers with an A2A Agent Card instead of a spec (PROTOCOL.md section
// 10.1); send it with Client.RegisterRaw. The card is sent as given.
type CardRegistration struct {
	A2ACard       json.RawMessage `json:"a2a_card"`
	Strict        bool            `json:"strict,omitempty"`
	NATSSubject   string          `json:"nats_subject,omitempty"`
	ConsumerGroup string          `json:"consumer_group,omitempty"`
	OwnerTeam     string          `json:"owner_team,omitempty"`
	TenantScope   *string         `json:"tenant_scope,omitempty"`
	Instance
}

// MCPToolspec is the result of an MCP tools/list: the tools, kept as JSON.
type MCPToolspec struct {
	Tools []json.RawMessage `json:"tools"`
}

// ToolspecRegistration registers an MCP server (or a tool) with its tool spec (PROTOCOL.md
// section 10.2); send it with Client.RegisterRaw.
type ToolspecRegistration struct {
	MCPToolspec   MCPToolspec `json:"mcp_toolspec"`
	Kind          string      `json:"kind,omitempty"`
	Description   string      `json:"description"`
	Version       string      `json:"version"`
	OwnerTeam     string      `json:"owner_team,omitempty"`
	URL           string      `json:"url,omitempty"`
	NATSSubject   string      `json:"nats_subject,omitempty"`
	ConsumerGroup string      `json:"consumer_group,omitempty"`
	TenantScope   *string     `json:"tenant_scope,omitempty"`
	Instance
}

// ServerJSONRegistration (v1.2) registers an MCP server with the server.json it publishes to
// the MCP Registry (docs/protocol.md section 8, docs/interop.md); send it with
// Client.RegisterRaw. The document is sent as given: its description, version, title and
// first streamable-http (else sse) remote become the spec's description, version,
// display_name and url, so those are not fields here (the registry refuses them beside it).
//
// A server.json lists no tools: they come either inside it, under
// _meta["io.modelcontextprotocol.registry/publisher-provided"].tools, or beside it as
// MCPToolspec (its tools/list result). Never both (invalid_request), never neither
// (invalid_card). The agent type is the register subject's; the reply warns when the server's
// name after the "/" differs, and names the keys the registry does not keep (packages, ...).
type ServerJSONRegistration struct {
	MCPServer json.RawMessage `json:"mcp_server"`
	// MCPToolspec is the server's tools when they are not inside MCPServer.
	MCPToolspec *MCPToolspec `json:"mcp_toolspec,omitempty"`
	// Kind is KindMCPServer (the default) or KindTool.
	Kind          string  `json:"kind,omitempty"`
	OwnerTeam     string  `json:"owner_team,omitempty"`
	NATSSubject   string  `json:"nats_subject,omitempty"`
	ConsumerGroup string  `json:"consumer_group,omitempty"`
	TenantScope   *string `json:"tenant_scope,omitempty"`
	Instance
}
