package agentregistry

import (
	"context"
	"encoding/json"
	"fmt"
)

func (c *Client) writeSubject(op string, tokens ...string) string {
	s := c.root() + "." + op
	for _, t := range tokens {
		s += "." + t
	}
	return s
}

// Register registers (or refreshes) one instance of an agent type with an AgentSpec.
func (c *Client) Register(ctx context.Context, req RegisterRequest) (*RegisterReply, error) {
	return c.RegisterRaw(ctx, req.Spec.AgentType, req)
}

// RegisterRaw sends any register body (an AgentSpec, an A2A card, an MCP tool spec
// registration, PROTOCOL.md section 10, or a server.json one, v1.2) for agentType:
// CardRegistration, ToolspecRegistration, ServerJSONRegistration, or a map.
func (c *Client) RegisterRaw(ctx context.Context, agentType string, body any) (*RegisterReply, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("agentregistry: register: encode: %w", err)
	}
	var r RegisterReply
	if err := c.request(ctx, c.writeSubject("register", agentType), data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Heartbeat refreshes an instance; a *Error with CodeUnknownInstance means register again.
func (c *Client) Heartbeat(ctx context.Context, agentType, instanceID string, req HeartbeatRequest) (*HeartbeatReply, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var r HeartbeatReply
	if err := c.request(ctx, c.writeSubject("heartbeat", agentType, instanceID), data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Deregister removes one instance.
func (c *Client) Deregister(ctx context.Context, agentType, instanceID, reason string) (*DeregisterReply, error) {
	return c.deregister(ctx, c.writeSubject("deregister", agentType, instanceID), reason)
}

// DeregisterType removes every instance of an agent type (an operator's action).
func (c *Client) DeregisterType(ctx context.Context, agentType, reason string) (*DeregisterReply, error) {
	return c.deregister(ctx, c.writeSubject("deregister", agentType), reason)
}

func (c *Client) deregister(ctx context.Context, subject, reason string) (*DeregisterReply, error) {
	data, err := json.Marshal(struct {
		Reason string `json:"reason,omitempty"`
	}{reason})
	if err != nil {
		return nil, err
	}
	var r DeregisterReply
	if err := c.request(ctx, subject, data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// PutSchema stores one version of a named schema (registry.schema.put.<name>).
func (c *Client) PutSchema(ctx context.Context, name string, req SchemaPutRequest) (*SchemaPutReply, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var r SchemaPutReply
	if err := c.request(ctx, c.prefix+".schema.put."+name, data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
