package agentregistry_test

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
	"github.com/nats-io/nats.go"
)

// Deprecation (protocol v1.2, docs/trust.md "Deprecation") on a real registry: a deprecated
// agent type stays routable and every answer that shows it carries Deprecated; a tie goes to the
// successor; Undeprecate withdraws it; refusals are *Error codes that change nothing; both
// decisions are events whose data reads as DeprecationData.
func TestDeprecation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	c := e.client

	var mu sync.Mutex
	var events []ar.DeprecationData
	sub, err := e.nc.Subscribe(e.prefix+".agent.*.go-old-sum", func(m *nats.Msg) {
		var ev struct {
			Type string             `json:"type"`
			Data ar.DeprecationData `json:"data"`
		}
		if json.Unmarshal(m.Data, &ev) == nil && (ev.Type == ar.EventAgentDeprecated || ev.Type == ar.EventAgentUndeprecated) {
			mu.Lock()
			events = append(events, ev.Data)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	for _, agentType := range []string{"go-old-sum", "go-new-sum"} {
		if _, err := c.Register(ctx, ar.RegisterRequest{Spec: spec(agentType, "go.summarize"), InstanceID: "i-1", Status: ar.StatusReady, HeartbeatIntervalMs: 60000}); err != nil {
			t.Fatal(err)
		}
	}

	r, err := c.Deprecate(ctx, "go-old-sum", ar.DeprecateRequest{By: "alice", Reason: "use go-new-sum", Successor: "go-new-sum", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Deprecated == nil || r.Deprecated.By != "alice" || r.Deprecated.Successor != "go-new-sum" || r.Deprecated.At == "" {
		t.Fatalf("deprecate: %+v", r)
	}
	rev := ar.MinRevision(r.Revision)
	lookup, err := c.Lookup(ctx, ar.LookupRequest{Capability: "go.summarize"}, rev)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range lookup.Providers {
		order = append(order, p.AgentType)
		if (p.Deprecated != nil) != (p.AgentType == "go-old-sum") {
			t.Fatalf("lookup provider %s: deprecated %+v", p.AgentType, p.Deprecated)
		}
	}
	if !slices.Equal(order, []string{"go-new-sum", "go-old-sum"}) {
		t.Fatalf("lookup order: %v", order)
	}
	route, err := c.Route(ctx, ar.RouteRequest{Skill: "go.summarize"}, rev)
	if err != nil || route.AgentType != "go-new-sum" || route.Deprecated != nil || len(route.Candidates) != 2 || route.Candidates[1].Deprecated == nil {
		t.Fatalf("route: %+v %v", route, err)
	}
	got, err := c.Get(ctx, "go-old-sum", rev)
	if err != nil || got.Agent.Deprecated == nil || got.Agent.Deprecated.Reason != "use go-new-sum" || !got.Agent.Routable() {
		t.Fatalf("get: %+v %v", got, err)
	}

	if _, err := c.Deprecate(ctx, "go-old-sum", ar.DeprecateRequest{By: "bob", Reason: "use go-new-sum", Successor: "go-new-sum"}); !errors.Is(err, ar.ErrConflict) {
		t.Fatalf("the same deprecation again: %v", err)
	}
	if _, err := c.Deprecate(ctx, "go-old-sum", ar.DeprecateRequest{By: "bob", Successor: "Not A Type"}); !errors.Is(err, ar.ErrInvalidRequest) {
		t.Fatalf("a successor that is no agent type: %v", err)
	}
	if _, err := c.Deprecate(ctx, "go-nobody", ar.DeprecateRequest{By: "bob"}); !errors.Is(err, ar.ErrNotFound) {
		t.Fatalf("an unknown type: %v", err)
	}

	u, err := c.Undeprecate(ctx, "go-old-sum", ar.UndeprecateRequest{By: "bob", Reason: "kept"})
	if err != nil || u.Deprecated != nil {
		t.Fatalf("undeprecate: %+v %v", u, err)
	}
	if _, err := c.Undeprecate(ctx, "go-old-sum", ar.UndeprecateRequest{By: "bob"}); !errors.Is(err, ar.ErrConflict) {
		t.Fatalf("undeprecating again: %v", err)
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || !events[0].Deprecated || events[0].By != "alice" || events[1].Deprecated || events[1].By != "bob" || events[1].Reason == nil || *events[1].Reason != "kept" {
		t.Fatalf("events: %+v", events)
	}
}
