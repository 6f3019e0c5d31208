package agentregistry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// The protocol's vectors (protocol/vectors/README.md), shared by every client's tests.

type specVector struct {
	Name        string          `json:"name"`
	About       string          `json:"about"`
	Spec        json.RawMessage `json:"spec"`
	Valid       bool            `json:"valid"`
	Code        string          `json:"code"`
	Paths       []string        `json:"paths"`
	SchemaValid *bool           `json:"schema_valid"`
	Expect      json.RawMessage `json:"expect"`
	Warnings    []string        `json:"warnings"`
	RegisterAs  string          `json:"register_as"`
	Wire        *struct {
		Code  string   `json:"code"`
		Paths []string `json:"paths"`
	} `json:"wire"`
}

func readVectors[T any](t *testing.T, file string) []T {
	t.Helper()
	data, err := os.ReadFile("../../protocol/vectors/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []T `json:"vectors"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(doc.Vectors) == 0 {
		t.Fatalf("%s holds no vector", file)
	}
	return doc.Vectors
}

// TestEmbeddedSchemaIsTheProtocols holds the embedded copy equal to protocol/agentspec.schema.json.
func TestEmbeddedSchemaIsTheProtocols(t *testing.T) {
	root, err := os.ReadFile("../../protocol/agentspec.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile("agentspec.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(root) != string(copied) {
		t.Fatal("clients/go/agentspec.schema.json differs from protocol/agentspec.schema.json: run go generate in clients/go")
	}
}

// issuePaths is the set of issue paths of a *ar.Error, sorted.
func issuePaths(err error) []string {
	var rerr *ar.Error
	if !errors.As(err, &rerr) {
		return nil
	}
	var out []string
	for _, is := range rerr.Issues {
		out = append(out, is.Path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestSpecVectorsSchema: the schema accepts every spec the registry accepts, and refuses
// those it can judge (schema_valid false) at the paths the registry names; a valid spec
// decodes into AgentSpec and encodes back to what the schema accepts.
func TestSpecVectorsSchema(t *testing.T) {
	for _, v := range readVectors[specVector](t, "specs.json") {
		t.Run(v.Name, func(t *testing.T) {
			err := ar.ValidateSpecJSON(v.Spec)
			schemaValid := v.Valid
			if v.SchemaValid != nil {
				schemaValid = *v.SchemaValid
			}
			if schemaValid {
				if err != nil {
					t.Fatalf("%s: the schema refuses it: %v", v.About, err)
				}
			} else {
				var rerr *ar.Error
				if !errors.As(err, &rerr) || rerr.Code != ar.CodeInvalidSpec {
					t.Fatalf("%s: want invalid_spec, got %v", v.About, err)
				}
				if got, want := issuePaths(err), sortedSet(v.Paths); !slices.Equal(got, want) {
					t.Fatalf("%s: paths %v, want %v (%v)", v.About, got, want, err)
				}
			}
			if v.Valid {
				var s ar.AgentSpec
				if err := json.Unmarshal(v.Spec, &s); err != nil {
					t.Fatalf("decode into AgentSpec: %v", err)
				}
				if err := ar.ValidateSpec(s); err != nil {
					t.Fatalf("the decoded spec, encoded again, is refused: %v", err)
				}
			}
		})
	}
}

// subsetMatch reports where expected does not match actual (protocol/vectors/README.md):
// objects by their expected keys, arrays element by element, scalars as JSON values. With
// omitted, an expected zero value (null, false, 0, "", [] or {}) also matches a missing key:
// the typed round trip leaves out what omitempty drops.
func subsetMatch(path string, expected, actual any, omitted bool) string {
	switch e := expected.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %v", path, actual)
		}
		for k, ev := range e {
			av, present := a[k]
			if !present {
				if omitted && isZero(ev) {
					continue
				}
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if d := subsetMatch(path+"."+k, ev, av, omitted); d != "" {
				return d
			}
		}
		return ""
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return fmt.Sprintf("%s: want %d items, got %v", path, len(e), actual)
		}
		for i := range e {
			if d := subsetMatch(fmt.Sprintf("%s.%d", path, i), e[i], a[i], omitted); d != "" {
				return d
			}
		}
		return ""
	default:
		if expected != actual {
			return fmt.Sprintf("%s: want %v, got %v", path, expected, actual)
		}
		return ""
	}
}

func isZero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return !t
	case float64:
		return t == 0
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// asJSONValue turns any value into the generic JSON form (maps, slices, float64...).
func asJSONValue(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func parseJSON(t *testing.T, data []byte) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return out
}

// checkStored reads agentType back with get and matches expect against it, as sent by the
// registry and as decoded into AgentView and encoded again (the types keep every field).
func checkStored(t *testing.T, e *env, agentType string, expect json.RawMessage) {
	t.Helper()
	if len(expect) == 0 {
		return
	}
	msg, err := e.nc.Request(e.prefix+".get", []byte(fmt.Sprintf(`{"agent_type":%q}`, agentType)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Agent json.RawMessage `json:"agent"`
	}
	if err := json.Unmarshal(msg.Data, &raw); err != nil || len(raw.Agent) == 0 {
		t.Fatalf("get %s: %s %v", agentType, msg.Data, err)
	}
	want := parseJSON(t, expect)
	if d := subsetMatch("agent", want, parseJSON(t, raw.Agent), false); d != "" {
		t.Fatalf("stored spec: %s", d)
	}
	var view ar.AgentView
	if err := json.Unmarshal(raw.Agent, &view); err != nil {
		t.Fatalf("decode into AgentView: %v", err)
	}
	if d := subsetMatch("AgentView", want, asJSONValue(t, view), true); d != "" {
		t.Fatalf("AgentView round trip: %s", d)
	}
}

// warningPaths is the text before the first ": " of each warning.
func warningPaths(warnings []string) []string {
	out := []string{}
	for _, w := range warnings {
		path, _, _ := strings.Cut(w, ": ")
		out = append(out, path)
	}
	return out
}

// checkRefusal holds err to a code and, when paths is not nil, exactly those issue paths.
func checkRefusal(t *testing.T, err error, code string, paths []string) {
	t.Helper()
	var rerr *ar.Error
	if !errors.As(err, &rerr) || rerr.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	if paths != nil {
		if got, want := issuePaths(err), sortedSet(paths); !slices.Equal(got, want) {
			t.Fatalf("paths %v, want %v (%v)", got, want, err)
		}
	}
}

var tenantRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$`)

// TestSpecVectorsRegistry registers every spec vector with a real registry.
func TestSpecVectorsRegistry(t *testing.T) {
	e := newEnv(t, nil)
	for _, v := range readVectors[specVector](t, "specs.json") {
		t.Run(v.Name, func(t *testing.T) {
			var head struct {
				AgentType   any `json:"agent_type"`
				TenantScope any `json:"tenant_scope"`
			}
			if err := json.Unmarshal(v.Spec, &head); err != nil {
				t.Fatal(err)
			}
			agentType, _ := head.AgentType.(string)
			if v.RegisterAs != "" {
				agentType = v.RegisterAs
			}
			client := e.client
			if tenant, ok := head.TenantScope.(string); ok && tenantRE.MatchString(tenant) {
				client = client.WithTenant(tenant)
			}
			reply, err := client.RegisterRaw(e.ctx(), agentType, map[string]any{"spec": v.Spec})
			if !v.Valid {
				code, paths := v.Code, v.Paths
				if v.Wire != nil {
					code, paths = v.Wire.Code, v.Wire.Paths
				}
				checkRefusal(t, err, code, paths)
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", v.About, err)
			}
			if v.Warnings != nil && !slices.Equal(warningPaths(reply.Warnings), v.Warnings) {
				t.Fatalf("warnings %q, want paths %v", reply.Warnings, v.Warnings)
			}
			checkStoredAs(t, e, client, agentType, v.Expect)
		})
	}
}

// checkStoredAs is checkStored through a tenant's client when the agent is a tenant's.
func checkStoredAs(t *testing.T, e *env, client *ar.Client, agentType string, expect json.RawMessage) {
	t.Helper()
	if client.Tenant() == "" {
		checkStored(t, e, agentType, expect)
		return
	}
	scoped := *e
	scoped.prefix = e.prefix + ".tenant." + client.Tenant()
	checkStored(t, &scoped, agentType, expect)
}

type importVector struct {
	Name      string          `json:"name"`
	About     string          `json:"about"`
	AgentType string          `json:"agent_type"`
	Card      json.RawMessage `json:"card"`
	Toolspec  json.RawMessage `json:"toolspec"`
	Server    json.RawMessage `json:"server"`
	With      map[string]any  `json:"with"`
	Valid     bool            `json:"valid"`
	Expect    json.RawMessage `json:"expect"`
	Warnings  []string        `json:"warnings"`
	Code      string          `json:"code"`
	Paths     []string        `json:"paths"`
}

// TestImportVectorsRegistry registers every A2A card, MCP tool spec and server.json vector.
func TestImportVectorsRegistry(t *testing.T) {
	e := newEnv(t, nil)
	for _, file := range []string{"cards.json", "toolspecs.json", "servers.json"} {
		for _, v := range readVectors[importVector](t, file) {
			t.Run(file+"/"+v.Name, func(t *testing.T) {
				body := map[string]any{}
				for k, val := range v.With {
					body[k] = val
				}
				switch file {
				case "cards.json":
					body["a2a_card"] = v.Card
				case "toolspecs.json":
					body["mcp_toolspec"] = v.Toolspec
				default:
					body["mcp_server"] = v.Server
				}
				client := e.client
				if tenant, ok := v.With["tenant_scope"].(string); ok && tenantRE.MatchString(tenant) {
					client = client.WithTenant(tenant)
				}
				reply, err := client.RegisterRaw(e.ctx(), v.AgentType, body)
				if !v.Valid {
					checkRefusal(t, err, v.Code, v.Paths)
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", v.About, err)
				}
				if v.Warnings != nil && !slices.Equal(warningPaths(reply.Warnings), v.Warnings) {
					t.Fatalf("warnings %q, want paths %v", reply.Warnings, v.Warnings)
				}
				checkStoredAs(t, e, client, v.AgentType, v.Expect)
			})
		}
	}
}

type requestVector struct {
	Name     string          `json:"name"`
	About    string          `json:"about"`
	Op       string          `json:"op"`
	Subject  string          `json:"subject"`
	Tenant   string          `json:"tenant"`
	Body     json.RawMessage `json:"body"`
	BodyText *string         `json:"body_text"`
	Expect   struct {
		Reply json.RawMessage `json:"reply"`
		Error string          `json:"error"`
		Paths []string        `json:"paths"`
	} `json:"expect"`
}

// replyTypes are the typed replies of the query ops, for the round-trip check.
var replyTypes = map[string]func() any{
	"lookup": func() any { return &ar.LookupReply{} }, "get": func() any { return &ar.GetReply{} },
	"list": func() any { return &ar.ListReply{} }, "capabilities": func() any { return &ar.CapabilitiesReply{} },
	"route": func() any { return &ar.RouteReply{} }, "find": func() any { return &ar.FindReply{} },
	"search": func() any { return &ar.SearchReply{} }, "discover": func() any { return &ar.DiscoverReply{} },
	"card": func() any { return &ar.CardReply{} }, "toolspec": func() any { return &ar.ToolspecReply{} },
	"check": func() any { return &ar.CheckReply{} }, "graph": func() any { return &ar.GraphReply{} },
	"schemas": func() any { return &ar.SchemasReply{} }, "schema": func() any { return &ar.SchemaReply{} },
	"approval.pending":   func() any { return &ar.PendingReply{} },
	"approval.deprecate": func() any { return &ar.DeprecationReply{} }, "approval.undeprecate": func() any { return &ar.DeprecationReply{} },
}

// TestRequestVectorsRegistry puts the vectors' schemas, registers their fleet, then sends
// every request and matches the reply (as sent, and decoded into this package's reply
// type) or the refusal.
func TestRequestVectorsRegistry(t *testing.T) {
	e := newEnv(t, nil)
	data, err := os.ReadFile("../../protocol/vectors/requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schemas []struct {
			Name    string    `json:"name"`
			Version string    `json:"version"`
			Schema  ar.Schema `json:"schema"`
		} `json:"schemas"`
		Fleet   []json.RawMessage `json:"fleet"`
		Vectors []requestVector   `json:"vectors"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	ctx := e.ctx()
	var rev uint64
	for _, s := range doc.Schemas {
		r, err := e.client.PutSchema(ctx, s.Name, ar.SchemaPutRequest{Version: s.Version, Schema: s.Schema})
		if err != nil {
			t.Fatalf("schema %s: %v", s.Name, err)
		}
		rev = max(rev, r.Revision)
	}
	for _, raw := range doc.Fleet {
		var spec ar.AgentSpec
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		client := e.client
		if spec.TenantScope != nil {
			client = client.WithTenant(*spec.TenantScope)
		}
		r, err := client.RegisterRaw(ctx, spec.AgentType, map[string]any{"spec": raw})
		if err != nil {
			t.Fatalf("fleet %s: %v", spec.AgentType, err)
		}
		rev = max(rev, r.Revision)
	}
	if _, err := e.client.List(ctx, ar.ListRequest{Limit: 1}, ar.MinRevision(rev)); err != nil {
		t.Fatal(err)
	}

	for _, v := range doc.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			root := e.prefix
			if v.Tenant != "" {
				root += ".tenant." + v.Tenant
			}
			subject := root + "." + v.Op
			if v.Subject != "" {
				subject = root + "." + v.Subject
			}
			body := []byte(v.Body)
			if v.BodyText != nil {
				body = []byte(*v.BodyText)
			}
			msg, err := e.nc.Request(subject, body, 10*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", subject, err)
			}
			status := msg.Header.Get("Nats-Service-Error-Code")
			if v.Expect.Error != "" {
				var reply struct {
					Error ar.Error `json:"error"`
				}
				if status == "" || json.Unmarshal(msg.Data, &reply) != nil {
					t.Fatalf("%s: want %s, got %s", v.About, v.Expect.Error, msg.Data)
				}
				rerr := reply.Error
				checkRefusal(t, &rerr, v.Expect.Error, v.Expect.Paths)
				return
			}
			if status != "" {
				t.Fatalf("%s: refused: %s", v.About, msg.Data)
			}
			want := parseJSON(t, v.Expect.Reply)
			if d := subsetMatch("reply", want, parseJSON(t, msg.Data), false); d != "" {
				t.Fatalf("%s: %s", v.About, d)
			}
			if mk, ok := replyTypes[v.Op]; ok && (v.Subject == "" || v.Subject == v.Op) {
				typed := mk()
				if err := json.Unmarshal(msg.Data, typed); err != nil {
					t.Fatalf("decode into %T: %v", typed, err)
				}
				if d := subsetMatch("typed", want, asJSONValue(t, typed), true); d != "" {
					t.Fatalf("%T round trip: %s", typed, d)
				}
			}
		})
	}
}
