package agentregistry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// BenchmarkLookupClientVsBare sends the same lookup through Client.Lookup (encode, request,
// decode into LookupReply) and as a bare nats.go request (a fixed body, the reply left as
// bytes), alternating them in one run so both see the same registry and machine load, and
// reports each one's median latency and their ratio.
func BenchmarkLookupClientVsBare(b *testing.B) {
	e := newEnv(b, nil)
	for i := range 5 {
		s := spec(fmt.Sprintf("provider-%d", i), "text.summarize", fmt.Sprintf("other.cap%d", i))
		e.register(s)
	}
	ctx := context.Background()
	subject := e.prefix + ".lookup"
	body := []byte(`{"capability":"text.summarize"}`)
	// Warm both paths (connections, the registry's JIT).
	for range 200 {
		if _, err := e.client.Lookup(ctx, ar.LookupRequest{Capability: "text.summarize"}); err != nil {
			b.Fatal(err)
		}
		if _, err := e.nc.Request(subject, body, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	client := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := e.client.Lookup(ctx, ar.LookupRequest{Capability: "text.summarize"})
		client = append(client, time.Since(start))
		if err != nil || len(r.Providers) != 5 {
			b.Fatalf("lookup: %v %v", r, err)
		}
		start = time.Now()
		msg, err := e.nc.Request(subject, body, 5*time.Second)
		bare = append(bare, time.Since(start))
		if err != nil || len(msg.Data) == 0 {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	pc, pb := median(client), median(bare)
	b.ReportMetric(float64(pc.Microseconds()), "client-p50-µs")
	b.ReportMetric(float64(pb.Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64(pc)/float64(pb), "client/bare-p50")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchFleet writes a registry file of n agents with overlapping skills and tags.
func benchFleet(b *testing.B, n int) string {
	type skill struct {
		ID   string   `json:"id"`
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	var agents []map[string]any
	for i := range n {
		name := fmt.Sprintf("agent-%04d", i)
		skills := []skill{
			{ID: fmt.Sprintf("skill.s%d", i%50), Name: "main", Tags: []string{fmt.Sprintf("t%d", i%7), fmt.Sprintf("t%d", i%11)}},
			{ID: fmt.Sprintf("skill.x%d", i), Name: "own", Tags: []string{"common"}},
		}
		runtime := []string{"acp-container", "copilot-bridge"}[i%2]
		agents = append(agents, map[string]any{
			"card":         map[string]any{"name": name, "description": "bench agent", "version": "1.0.0", "skills": skills},
			"queueSubject": "agent.tasks." + name,
			"runtime":      runtime,
		})
	}
	data, err := json.Marshal(map[string]any{"agents": agents})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "fleet.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRouteByScore routes with the file implementation and with the live view of a
// registry that loaded the same 500-agent file (both answer from memory), and, for scale,
// with the registry's own route op through the Client (a round trip).
func BenchmarkRouteByScore(b *testing.B) {
	path := benchFleet(b, 500)
	file, err := ar.LoadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	e := newEnv(b, nil, "REGISTRY_FILE="+path)
	live, err := ar.NewLiveRegistry(context.Background(), e.client, ar.LiveOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer live.Close()
	if len(live.All()) != 500 {
		b.Fatalf("live view holds %d agents", len(live.All()))
	}
	req := ar.RoutingRequest{SkillID: "skill.s7", Tags: []string{"t3", "t5", "common"}, PreferredRuntime: "copilot-bridge"}
	want, err := file.RouteByScore(req)
	if err != nil {
		b.Fatal(err)
	}
	for name, reg := range map[string]ar.Registry{"file": file, "live": live} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				r, err := reg.RouteByScore(req)
				if err != nil || r.Agent.AgentType != want.Agent.AgentType {
					b.Fatalf("%s: %s %v", name, r.Agent.AgentType, err)
				}
			}
		})
	}
	b.Run("route-op", func(b *testing.B) {
		ctx := context.Background()
		for range b.N {
			r, err := e.client.Route(ctx, ar.RouteRequest{Skill: req.SkillID, Tags: req.Tags, PreferredRuntime: req.PreferredRuntime})
			if err != nil || r.AgentType != want.Agent.AgentType {
				b.Fatalf("route op: %+v %v", r, err)
			}
		}
	})
}
