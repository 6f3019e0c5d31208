package agentregistry_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
	"github.com/agent-registry/agent-registry/clients/go/internal/harness"
	"github.com/nats-io/nats.go"
)

// natsServer is the nats-server every test shares; each test environment starts its own
// registry process on it, under a prefix, bucket and stream of its own.
var natsServer *harness.NATS

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agent-registry-go-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	natsServer, err = harness.StartNATS(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer natsServer.Stop()
	return m.Run()
}

// env is one registry process and a client connection to it.
type env struct {
	t        testing.TB
	prefix   string
	nats     *harness.NATS
	registry *harness.Registry
	nc       *nats.Conn
	client   *ar.Client
}

var envCount atomic.Int64

// newEnv starts a registry of the test's own on server (the shared one when nil), with short
// heartbeat bounds, and stops it when the test ends.
func newEnv(t testing.TB, server *harness.NATS, extra ...string) *env {
	t.Helper()
	if server == nil {
		server = natsServer
	}
	tag := fmt.Sprintf("t%d", envCount.Add(1))
	e := &env{t: t, prefix: tag + ".registry", nats: server}
	settings := append([]string{
		"REGISTRY_PREFIX=" + e.prefix,
		"REGISTRY_BUCKET=" + tag + "-registry",
		"REGISTRY_EVENTS_STREAM=" + strings.ToUpper(tag) + "_EVENTS",
		"REGISTRY_MIN_HEARTBEAT_INTERVAL_MS=100",
		"REGISTRY_EVICTION_TICK_MS=50",
		"REGISTRY_LEASE_MS=500",
	}, extra...)
	reg, err := harness.StartRegistry(server.URL(), settings...)
	if err != nil {
		t.Fatal(err)
	}
	e.registry = reg
	t.Cleanup(func() {
		reg.Stop()
		if t.Failed() {
			t.Logf("registry output:\n%s", reg.Output())
		}
	})
	e.nc = e.connect()
	e.client = ar.NewClient(e.nc, ar.Options{Prefix: e.prefix})
	return e
}

// connect opens a connection that reconnects forever and is closed when the test ends.
func (e *env) connect() *nats.Conn {
	e.t.Helper()
	nc, err := ar.Connect(e.nats.URL(), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(nc.Close)
	return nc
}

// ctx is a context for one test step.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// spec is a small valid AgentSpec with one capability per name.
func spec(agentType string, capabilities ...string) ar.AgentSpec {
	s := ar.AgentSpec{
		AgentType:     agentType,
		Version:       "1.0.0",
		Description:   "test agent " + agentType,
		OwnerTeam:     "go-client",
		NATSSubject:   "agent.tasks." + agentType,
		ConsumerGroup: agentType,
	}
	for _, c := range capabilities {
		s.Capabilities = append(s.Capabilities, ar.Capability{Name: c, Description: "does " + c})
	}
	return s
}
