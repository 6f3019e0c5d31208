package agentregistry_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// register registers s as one ready instance and returns the reply.
func (e *env) register(s ar.AgentSpec) *ar.RegisterReply {
	e.t.Helper()
	r, err := e.client.Register(e.ctx(), ar.RegisterRequest{Spec: s, HeartbeatIntervalMs: 60000})
	if err != nil {
		e.t.Fatalf("register %s: %v", s.AgentType, err)
	}
	return r
}

func codeOf(t *testing.T, err error) *ar.Error {
	t.Helper()
	var rerr *ar.Error
	if !errors.As(err, &rerr) {
		t.Fatalf("want a *agentregistry.Error, got %T %v", err, err)
	}
	return rerr
}

func TestQueries(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	summarizer := spec("summarizer", "text.summarize", "text.translate")
	summarizer.Capabilities[0].Tags = []string{"text", "nlp"}
	summarizer.Capabilities[0].InputSchema = ar.Schema(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	hint := 0.9
	summarizer.Capabilities[0].ConfidenceHint = &hint
	summarizer.Runtime = "acp-container"
	e.register(summarizer)
	e.register(spec("backup-summarizer", "text.summarize"))
	last := e.register(spec("classifier", "text.classify"))

	t.Run("lookup orders by confidence_hint", func(t *testing.T) {
		r, err := e.client.Lookup(ctx, ar.LookupRequest{Capability: "text.summarize"}, ar.MinRevision(last.Revision))
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, p := range r.Providers {
			got = append(got, p.AgentType)
		}
		if !slices.Equal(got, []string{"summarizer", "backup-summarizer"}) || r.Providers[0].ReadyInstances != 1 || r.Revision < last.Revision {
			t.Fatalf("lookup: %+v", r)
		}
		var schema map[string]any
		if err := json.Unmarshal(r.Providers[0].InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Fatalf("input_schema %s", r.Providers[0].InputSchema)
		}
	})
	t.Run("get", func(t *testing.T) {
		r, err := e.client.Get(ctx, "summarizer")
		if err != nil {
			t.Fatal(err)
		}
		a := r.Agent
		if a.Status != ar.StatusReady || a.Runtime != "acp-container" || len(a.Instances) != 1 || a.Instances[0].HeartbeatIntervalMs != 60000 || a.MaxConcurrentTasks != 10 || a.Weight != 1 {
			t.Fatalf("get: %+v", a)
		}
		// v1.2: a spec never changed was last updated when it was registered.
		if a.UpdatedAt != a.RegisteredAt {
			t.Fatalf("updated_at %q, registered_at %q", a.UpdatedAt, a.RegisteredAt)
		}
	})
	t.Run("list pages through ListAll", func(t *testing.T) {
		var got []string
		for a, err := range e.client.ListAll(ctx, ar.ListRequest{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a.AgentType)
		}
		if !slices.Equal(got, []string{"backup-summarizer", "classifier", "summarizer"}) {
			t.Fatalf("ListAll: %v", got)
		}
		page, err := e.client.List(ctx, ar.ListRequest{Limit: 1})
		if err != nil || len(page.Agents) != 1 || page.NextCursor == nil {
			t.Fatalf("List: %+v %v", page, err)
		}
	})
	t.Run("list by agent types", func(t *testing.T) {
		page, err := e.client.List(ctx, ar.ListRequest{AgentTypes: []string{"summarizer", "no-such-agent", "classifier"}, InstancesLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range page.Agents {
			got = append(got, a.AgentType)
			if len(a.Instances) > 1 {
				t.Fatalf("%s: %d instances past InstancesLimit 1", a.AgentType, len(a.Instances))
			}
		}
		if !slices.Equal(got, []string{"classifier", "summarizer"}) || page.NextCursor != nil {
			t.Fatalf("List by AgentTypes: %v, next %v", got, page.NextCursor)
		}
	})
	t.Run("capabilities", func(t *testing.T) {
		var names []string
		for c, err := range e.client.CapabilitiesAll(ctx, ar.CapabilitiesRequest{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, c.Name)
		}
		if !slices.Equal(names, []string{"text.classify", "text.summarize", "text.translate"}) {
			t.Fatalf("capabilities: %v", names)
		}
	})
	t.Run("route", func(t *testing.T) {
		r, err := e.client.Route(ctx, ar.RouteRequest{Skill: "text.summarize", Tags: []string{"nlp"}})
		if err != nil {
			t.Fatal(err)
		}
		if r.AgentType != "summarizer" || r.Score != 1.5 || len(r.Candidates) != 2 || r.Candidates[1].Score != 1 {
			t.Fatalf("route: %+v", r)
		}
		_, err = e.client.Route(ctx, ar.RouteRequest{Skill: "nothing.here"})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeNoRoute || rerr.Status != 404 || !errors.Is(err, ar.ErrNoRoute) {
			t.Fatalf("route without match: %+v", rerr)
		}
	})
	t.Run("find", func(t *testing.T) {
		var got []string
		for a, err := range e.client.FindAll(ctx, ar.FindRequest{Skill: "text.summarize", Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a.AgentType)
		}
		if !slices.Equal(got, []string{"backup-summarizer", "summarizer"}) {
			t.Fatalf("find skill: %v", got)
		}
		r, err := e.client.Find(ctx, ar.FindRequest{Tag: "nlp"})
		if err != nil || len(r.Agents) != 1 || r.Agents[0].AgentType != "summarizer" {
			t.Fatalf("find tag: %+v %v", r, err)
		}
		_, err = e.client.Find(ctx, ar.FindRequest{})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeInvalidRequest || rerr.Status != 400 {
			t.Fatalf("find with nothing: %+v", rerr)
		}
	})
	t.Run("search and discover", func(t *testing.T) {
		s, err := e.client.Search(ctx, ar.SearchRequest{Query: "classify"})
		if err != nil || len(s.Results) == 0 || s.Results[0].AgentType != "classifier" {
			t.Fatalf("search: %+v %v", s, err)
		}
		var ids []string
		for a, err := range e.client.DiscoverAll(ctx, ar.DiscoverRequest{Capability: "text.summarize"}) {
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != "ready" {
				t.Fatalf("discover status %+v", a)
			}
			ids = append(ids, a.ID)
		}
		if !slices.Equal(ids, []string{"backup-summarizer", "summarizer"}) {
			t.Fatalf("discover: %v", ids)
		}
	})
	t.Run("card, toolspec and check", func(t *testing.T) {
		c, err := e.client.Card(ctx, "summarizer", "1.0")
		if err != nil {
			t.Fatal(err)
		}
		var card struct {
			Name   string `json:"name"`
			Skills []struct {
				ID string `json:"id"`
			} `json:"skills"`
		}
		if err := json.Unmarshal(c.Card, &card); err != nil || len(card.Skills) != 2 || card.Skills[0].ID != "text.summarize" {
			t.Fatalf("card: %s %v", c.Card, err)
		}
		ts, err := e.client.Toolspec(ctx, "summarizer")
		if err != nil || len(ts.Tools) != 2 || ts.Tools[0].Name != "text.summarize" {
			t.Fatalf("toolspec: %+v %v", ts, err)
		}
		bad, err := e.client.Check(ctx, ar.CheckRequest{Capability: "text.summarize", AgentType: "summarizer", Payload: map[string]any{"text": 3}})
		if err != nil || bad.Valid || len(bad.Errors) == 0 {
			t.Fatalf("check of a bad payload: %+v %v", bad, err)
		}
		good, err := e.client.Check(ctx, ar.CheckRequest{Capability: "text.summarize", AgentType: "summarizer", Payload: map[string]any{"text": "hi"}})
		if err != nil || !good.Valid {
			t.Fatalf("check of a good payload: %+v %v", good, err)
		}
	})
	t.Run("schemas, graph and sbom", func(t *testing.T) {
		put, err := e.client.PutSchema(ctx, "Page", ar.SchemaPutRequest{Version: "1.0.0", Schema: ar.Schema(`{"type":"object"}`), Description: "a page"})
		if err != nil || !put.Created {
			t.Fatalf("put: %+v %v", put, err)
		}
		var names []string
		for s, err := range e.client.SchemasAll(ctx, "", 10, ar.MinRevision(put.Revision)) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, s.Name+"@"+s.Version)
		}
		if !slices.Equal(names, []string{"Page@1.0.0"}) {
			t.Fatalf("schemas: %v", names)
		}
		one, err := e.client.Schema(ctx, "Page", "1.0.0")
		if err != nil || string(one.Schema) != `{"type":"object"}` {
			t.Fatalf("schema: %+v %v", one, err)
		}
		_, err = e.client.Schema(ctx, "Page", "9.9.9")
		if rerr := codeOf(t, err); rerr.Code != ar.CodeNotFound {
			t.Fatalf("missing schema: %+v", rerr)
		}
		g, err := e.client.Graph(ctx, ar.GraphRequest{})
		if err != nil || len(g.Nodes) != 3 {
			t.Fatalf("graph: %+v %v", g, err)
		}
		doc, err := e.client.Sbom(ctx, ar.SbomRequest{})
		var bom struct {
			BomFormat string `json:"bomFormat"`
		}
		if err != nil || json.Unmarshal(doc, &bom) != nil || bom.BomFormat != "CycloneDX" {
			t.Fatalf("sbom: %s %v", doc, err)
		}
	})
}

func TestErrors(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	t.Run("not_found", func(t *testing.T) {
		_, err := e.client.Get(ctx, "nobody")
		rerr := codeOf(t, err)
		if rerr.Code != ar.CodeNotFound || rerr.Status != 404 || rerr.Message == "" || !errors.Is(err, ar.ErrNotFound) || errors.Is(err, ar.ErrConflict) {
			t.Fatalf("%+v", rerr)
		}
	})
	t.Run("invalid_spec carries issues", func(t *testing.T) {
		bad := spec("broken", "ok.cap", "ok.cap")
		bad.Version = "one"
		_, err := e.client.Register(ctx, ar.RegisterRequest{Spec: bad})
		rerr := codeOf(t, err)
		paths := map[string]bool{}
		for _, is := range rerr.Issues {
			paths[is.Path] = true
		}
		if rerr.Code != ar.CodeInvalidSpec || rerr.Status != 400 || !paths["spec.version"] && !paths["version"] {
			t.Fatalf("%+v", rerr)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		e.register(spec("writer", "text.write"))
		changed := spec("writer", "text.write", "text.edit")
		_, err := e.client.Register(ctx, ar.RegisterRequest{Spec: changed})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeConflict || rerr.Status != 409 {
			t.Fatalf("same version, other spec: %+v", rerr)
		}
		thief := spec("thief", "text.steal")
		thief.NATSSubject = "agent.tasks.writer"
		_, err = e.client.Register(ctx, ar.RegisterRequest{Spec: thief})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeConflict {
			t.Fatalf("subject of another type: %+v", rerr)
		}
	})
	t.Run("unknown_instance", func(t *testing.T) {
		_, err := e.client.Heartbeat(ctx, "writer", "no-such-instance", ar.HeartbeatRequest{})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeUnknownInstance || rerr.Status != 404 {
			t.Fatalf("%+v", rerr)
		}
	})
	t.Run("invalid_request", func(t *testing.T) {
		_, err := e.client.Lookup(ctx, ar.LookupRequest{})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeInvalidRequest || len(rerr.Issues) == 0 {
			t.Fatalf("%+v", rerr)
		}
	})
	t.Run("stale_view", func(t *testing.T) {
		_, err := e.client.Lookup(ctx, ar.LookupRequest{Capability: "text.write"}, ar.MinRevision(1<<40))
		if rerr := codeOf(t, err); rerr.Code != ar.CodeStaleView || rerr.Status != 503 || !rerr.Retryable() {
			t.Fatalf("%+v", rerr)
		}
	})
	t.Run("no responders", func(t *testing.T) {
		other := ar.NewClient(e.nc, ar.Options{Prefix: "nobody-listens"})
		_, err := other.Get(ctx, "writer")
		if !ar.IsUnreachable(err) {
			t.Fatalf("want an unreachable registry, got %v", err)
		}
	})
}

func TestWritesAndTenants(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	reg := e.register(spec("shared-agent", "work.do"))
	hb, err := e.client.Heartbeat(ctx, "shared-agent", reg.InstanceID, ar.HeartbeatRequest{Status: ar.StatusDraining})
	if err != nil || hb.Status != ar.StatusDraining {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}

	acme := e.client.WithTenant("acme")
	scoped := spec("acme-agent", "work.do")
	tenant := "acme"
	scoped.TenantScope = &tenant
	r, err := acme.Register(ctx, ar.RegisterRequest{Spec: scoped})
	if err != nil {
		t.Fatal(err)
	}
	// The tenant sees its agent and the shared one; the shared view sees only the shared one.
	find := func(c *ar.Client) []string {
		res, err := c.Find(ctx, ar.FindRequest{Skill: "work.do"}, ar.MinRevision(r.Revision))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range res.Agents {
			names = append(names, a.AgentType)
		}
		return names
	}
	if got := find(acme); !slices.Equal(got, []string{"acme-agent", "shared-agent"}) {
		t.Fatalf("tenant view: %v", got)
	}
	if got := find(e.client); !slices.Equal(got, []string{"shared-agent"}) {
		t.Fatalf("shared view: %v", got)
	}
	if _, err := e.client.Get(ctx, "acme-agent"); codeOf(t, err).Code != ar.CodeNotFound {
		t.Fatalf("shared get of a tenant's agent: %v", err)
	}
	if _, err := e.client.WithTenant("other").Get(ctx, "acme-agent"); codeOf(t, err).Code != ar.CodeNotFound {
		t.Fatalf("other tenant's get: %v", err)
	}

	d, err := acme.Deregister(ctx, "acme-agent", r.InstanceID, "done")
	if err != nil || !d.AgentRemoved {
		t.Fatalf("deregister: %+v %v", d, err)
	}
	d, err = e.client.DeregisterType(ctx, "shared-agent", "operator")
	if err != nil || !d.AgentRemoved {
		t.Fatalf("deregister type: %+v %v", d, err)
	}
	if _, err := e.client.Deregister(ctx, "shared-agent", reg.InstanceID, "again"); codeOf(t, err).Code != ar.CodeUnknownInstance {
		t.Fatalf("second deregister: %v", err)
	}
}

// TestCardAndToolspecRegistrations registers an A2A card and an MCP tool spec with the typed
// bodies, and reads the card back as an AgentCard.
func TestCardAndToolspecRegistrations(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	card := `{"name": "Notes", "description": "Keeps notes", "version": "1.2.0",
		"supportedInterfaces": [{"url": "https://notes.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
		"provider": {"organization": "team-notes", "url": "https://notes.example"},
		"capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
		"skills": [{"id": "notes.add", "name": "Add a note", "description": "Stores a note", "tags": ["notes"]}]}`
	r, err := e.client.RegisterRaw(ctx, "notes", ar.CardRegistration{A2ACard: json.RawMessage(card), Instance: ar.Instance{InstanceID: "notes-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.A2AVersion != "1.0" || r.InstanceID != "notes-1" {
		t.Fatalf("card registration: %+v", r)
	}
	got, err := e.client.Get(ctx, "notes", ar.MinRevision(r.Revision))
	if err != nil || got.Agent.OwnerTeam != "team-notes" || got.Agent.NATSSubject != "agent.tasks.notes" || got.Agent.DisplayName != "Notes" || len(got.Agent.A2ACard) == 0 {
		t.Fatalf("get: %+v %v", got, err)
	}
	reply, err := e.client.Card(ctx, "notes", "")
	if err != nil {
		t.Fatal(err)
	}
	exported, err := reply.Decode()
	if err != nil || exported.Version != "1.2.0" || len(exported.Skills) != 1 || exported.Skills[0].ID != "notes.add" || exported.Provider == nil || exported.Provider.Organization != "team-notes" {
		t.Fatalf("card: %+v %v", exported, err)
	}

	tools := ar.MCPToolspec{Tools: []json.RawMessage{json.RawMessage(`{"name": "read_url", "description": "Reads a page", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}, "annotations": {"readOnlyHint": true}}`)}}
	tr, err := e.client.RegisterRaw(ctx, "web-reader", ar.ToolspecRegistration{MCPToolspec: tools, Kind: ar.KindMCPServer, Description: "Reads the web", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := e.client.Toolspec(ctx, "web-reader", ar.MinRevision(tr.Revision))
	if err != nil || len(ts.Tools) != 1 || ts.Tools[0].Name != "read_url" || ts.Tools[0].Annotations == nil || ts.Tools[0].Annotations.ReadOnlyHint == nil || !*ts.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("toolspec: %+v %v", ts, err)
	}
	look, err := e.client.Lookup(ctx, ar.LookupRequest{Capability: "read_url", Kind: ar.KindMCPServer})
	if err != nil || len(look.Providers) != 1 || look.Providers[0].Kind != ar.KindMCPServer {
		t.Fatalf("lookup by kind: %+v %v", look, err)
	}
}

// TestServerJSONRegistration registers the repository's weather.server.json fixture (its tools
// inside its _meta) and a server.json with its tools beside it, with the typed body, and reads
// back what the document filled in.
func TestServerJSONRegistration(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	server, err := os.ReadFile("../../test/fixtures/cli/weather.server.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.client.RegisterRaw(ctx, "weather-go", ar.ServerJSONRegistration{MCPServer: server, OwnerTeam: "go", Instance: ar.Instance{InstanceID: "weather-1"}})
	if err != nil {
		t.Fatal(err)
	}
	// The server is named io.example.acme/weather, not weather-go; its packages are not kept.
	warns := func(about string) bool {
		return slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, about) })
	}
	if r.InstanceID != "weather-1" || !warns("mcp_server.name: ") || !warns("mcp_server.packages") {
		t.Fatalf("server.json registration: %+v", r)
	}
	look, err := e.client.Lookup(ctx, ar.LookupRequest{Capability: "weather.forecast", Kind: ar.KindMCPServer}, ar.MinRevision(r.Revision))
	if err != nil || len(look.Providers) != 1 || look.Providers[0].AgentType != "weather-go" || look.Providers[0].NATSSubject != "mcp.tools.weather-go" {
		t.Fatalf("lookup: %+v %v", look, err)
	}
	got, err := e.client.Get(ctx, "weather-go", ar.MinRevision(r.Revision))
	if err != nil {
		t.Fatal(err)
	}
	a := got.Agent
	if a.DisplayName != "Weather" || a.URL != "https://weather.example.com/mcp" || a.Kind != ar.KindMCPServer || a.Version != "1.4.0" || a.OwnerTeam != "go" || len(a.Capabilities) != 2 {
		t.Fatalf("get: %+v", a)
	}

	// The same server without its _meta, its tools beside it as a tools/list result.
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(server, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "_meta")
	bare, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	tools := &ar.MCPToolspec{Tools: []json.RawMessage{json.RawMessage(`{"name": "tides.table", "description": "High and low water", "inputSchema": {"type": "object"}}`)}}
	tr, err := e.client.RegisterRaw(ctx, "tides", ar.ServerJSONRegistration{MCPServer: bare, MCPToolspec: tools, Kind: ar.KindTool})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := e.client.Toolspec(ctx, "tides", ar.MinRevision(tr.Revision))
	if err != nil || len(ts.Tools) != 1 || ts.Tools[0].Name != "tides.table" {
		t.Fatalf("toolspec: %+v %v", ts, err)
	}

	// Tools in both places are refused, and nothing is stored.
	_, err = e.client.RegisterRaw(ctx, "both", ar.ServerJSONRegistration{MCPServer: server, MCPToolspec: tools})
	if ce := codeOf(t, err); ce.Code != ar.CodeInvalidRequest || len(ce.Issues) != 1 || ce.Issues[0].Path != "mcp_toolspec" {
		t.Fatalf("tools in both places: %v", err)
	}
	if _, err := e.client.Get(ctx, "both"); codeOf(t, err).Code != ar.CodeNotFound {
		t.Fatalf("refused registration stored: %v", err)
	}
}
