package agentregistry

import (
	"context"
	"encoding/json"
)

// Lookup returns the providers of a capability, best first (one page; see LookupAll).
func (c *Client) Lookup(ctx context.Context, req LookupRequest, opts ...QueryOption) (*LookupReply, error) {
	var r LookupReply
	if err := c.query(ctx, "lookup", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Get returns one agent type; a *Error with CodeNotFound when the registry does not know it.
func (c *Client) Get(ctx context.Context, agentType string, opts ...QueryOption) (*GetReply, error) {
	var r GetReply
	if err := c.query(ctx, "get", struct {
		AgentType string `json:"agent_type"`
	}{agentType}, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// List returns one page of agent types, ordered by agent_type (see ListAll).
func (c *Client) List(ctx context.Context, req ListRequest, opts ...QueryOption) (*ListReply, error) {
	var r ListReply
	if err := c.query(ctx, "list", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Capabilities returns one page of the capability projection (see CapabilitiesAll).
func (c *Client) Capabilities(ctx context.Context, req CapabilitiesRequest, opts ...QueryOption) (*CapabilitiesReply, error) {
	var r CapabilitiesReply
	if err := c.query(ctx, "capabilities", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Route asks the registry to pick the best ready agent; a *Error with CodeNoRoute when none scores.
func (c *Client) Route(ctx context.Context, req RouteRequest, opts ...QueryOption) (*RouteReply, error) {
	var r RouteReply
	if err := c.query(ctx, "route", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Find returns the agent types with a skill, a tag or a name (one page; see FindAll).
func (c *Client) Find(ctx context.Context, req FindRequest, opts ...QueryOption) (*FindReply, error) {
	var r FindReply
	if err := c.query(ctx, "find", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Search ranks capabilities by keyword relevance.
func (c *Client) Search(ctx context.Context, req SearchRequest, opts ...QueryOption) (*SearchReply, error) {
	var r SearchReply
	if err := c.query(ctx, "search", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Discover lists agent types with their capability names and availability (see DiscoverAll).
func (c *Client) Discover(ctx context.Context, req DiscoverRequest, opts ...QueryOption) (*DiscoverReply, error) {
	var r DiscoverReply
	if err := c.query(ctx, "discover", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Card exports an agent type as an A2A Agent Card ("1.0" by default, or "0.3").
func (c *Client) Card(ctx context.Context, agentType, a2aVersion string, opts ...QueryOption) (*CardReply, error) {
	var r CardReply
	if err := c.query(ctx, "card", struct {
		AgentType  string `json:"agent_type"`
		A2AVersion string `json:"a2a_version,omitempty"`
	}{agentType, a2aVersion}, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Toolspec exports an agent type's capabilities as MCP tools.
func (c *Client) Toolspec(ctx context.Context, agentType string, opts ...QueryOption) (*ToolspecReply, error) {
	var r ToolspecReply
	if err := c.query(ctx, "toolspec", struct {
		AgentType string `json:"agent_type"`
	}{agentType}, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Check checks a payload against a capability's input (or output) schema.
func (c *Client) Check(ctx context.Context, req CheckRequest, opts ...QueryOption) (*CheckReply, error) {
	var r CheckReply
	if err := c.query(ctx, "check", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Graph returns the dependency graph of the fleet or of one agent type.
func (c *Client) Graph(ctx context.Context, req GraphRequest, opts ...QueryOption) (*GraphReply, error) {
	var r GraphReply
	if err := c.query(ctx, "graph", req, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Sbom returns a CycloneDX 1.6 (default) or SPDX 2.3 document, as JSON.
func (c *Client) Sbom(ctx context.Context, req SbomRequest, opts ...QueryOption) (json.RawMessage, error) {
	var r json.RawMessage
	if err := c.query(ctx, "sbom", req, &r, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// Schemas lists stored named schemas (one page; see SchemasAll).
func (c *Client) Schemas(ctx context.Context, name string, page Page, opts ...QueryOption) (*SchemasReply, error) {
	var r SchemasReply
	if err := c.query(ctx, "schemas", struct {
		Name string `json:"name,omitempty"`
		Page
	}{name, page}, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Schema returns one version of a named schema.
func (c *Client) Schema(ctx context.Context, name, version string, opts ...QueryOption) (*SchemaReply, error) {
	var r SchemaReply
	if err := c.query(ctx, "schema", struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{name, version}, &r, opts); err != nil {
		return nil, err
	}
	return &r, nil
}

// Page is where a paged query starts and how much it returns.
type Page struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}
