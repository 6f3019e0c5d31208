package agentregistry_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
	"github.com/agent-registry/agent-registry/clients/go/internal/harness"
	"github.com/nats-io/nats.go"
)

// events records what an Agent reports.
type events struct {
	mu  sync.Mutex
	all []ar.AgentEvent
}

func (ev *events) add(e ar.AgentEvent) {
	ev.mu.Lock()
	ev.all = append(ev.all, e)
	ev.mu.Unlock()
}

func (ev *events) count(typ, reason string) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	n := 0
	for _, e := range ev.all {
		if e.Type == typ && (reason == "" || e.Reason == reason) {
			n++
		}
	}
	return n
}

func echo(_ context.Context, task *nats.Msg) ([]byte, error) {
	if string(task.Data) == "fail" {
		return nil, errors.New("cannot do that")
	}
	return append([]byte("done: "), task.Data...), nil
}

// instances returns the live instance ids of agentType ("" when the registry does not hold it).
func (e *env) instances(agentType string, opts ...ar.QueryOption) []string {
	r, err := e.client.Get(e.ctx(), agentType, opts...)
	var rerr *ar.Error
	if errors.As(err, &rerr) && rerr.Code == ar.CodeNotFound {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, in := range r.Agent.Instances {
		ids = append(ids, in.InstanceID)
	}
	return ids
}

func TestAgentServesHeartbeatsAndLeaves(t *testing.T) {
	e := newEnv(t, nil)
	var ev events
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agentConn := e.connect()
	agent, err := ar.StartAgent(ctx, ar.NewClient(agentConn, ar.Options{Prefix: e.prefix}), spec("echo", "text.echo"), echo,
		ar.AgentOptions{InstanceID: "echo-1", HeartbeatInterval: 100 * time.Millisecond, Metadata: map[string]string{"pod": "echo-1"}, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	if agent.InstanceID() != "echo-1" || agent.Registration().HeartbeatIntervalMs != 100 {
		t.Fatalf("registration: %+v", agent.Registration())
	}

	reply, err := e.nc.Request("agent.tasks.echo", []byte("hello"), 5*time.Second)
	if err != nil || string(reply.Data) != "done: hello" {
		t.Fatalf("task: %v %v", reply, err)
	}
	reply, err = e.nc.Request("agent.tasks.echo", []byte("fail"), 5*time.Second)
	if err != nil || reply.Header.Get("Nats-Service-Error-Code") != "500" {
		t.Fatalf("failing task: %v %v", reply, err)
	}

	// Heartbeats move last_heartbeat on (read your writes: the first read holds the registration).
	first, err := e.client.Get(e.ctx(), "echo", ar.MinRevision(agent.Registration().Revision))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a heartbeat after registration", func() bool {
		r, err := e.client.Get(e.ctx(), "echo")
		return err == nil && len(r.Agent.Instances) == 1 && r.Agent.Instances[0].LastHeartbeat != first.Agent.Instances[0].LastHeartbeat
	})

	cancel()
	if err := agent.Wait(); err != nil {
		t.Fatal(err)
	}
	// The deregister reply's revision is not at hand: wait for the view to show the agent gone.
	eventually(t, "echo gone from the registry's view", func() bool { return len(e.instances("echo")) == 0 })
	r, err := e.client.List(e.ctx(), ar.ListRequest{Status: []string{ar.StatusDeregistered}})
	if err != nil || len(r.Agents) != 1 || r.Agents[0].AgentType != "echo" {
		t.Fatalf("deregistered: %+v %v", r, err)
	}
	if ev.count(ar.EventRegistered, "") != 1 || ev.count(ar.EventDeregistered, "") != 1 {
		t.Fatalf("events: %+v", ev.all)
	}
	// The subscription is gone: nobody takes tasks any more.
	if _, err := e.nc.Request("agent.tasks.echo", []byte("x"), time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("task after the agent left: %v", err)
	}
}

func TestAgentRefusedSpec(t *testing.T) {
	e := newEnv(t, nil)
	bad := spec("bad-version", "x.y")
	bad.Version = "one"
	_, err := ar.StartAgent(e.ctx(), e.client, bad, echo, ar.AgentOptions{})
	var rerr *ar.Error
	if !errors.As(err, &rerr) || rerr.Code != ar.CodeInvalidSpec {
		t.Fatalf("want invalid_spec, got %v", err)
	}
	_, err = ar.StartAgent(e.ctx(), e.client, spec("Bad Name", "x.y"), echo, ar.AgentOptions{})
	if !errors.As(err, &rerr) || rerr.Code != ar.CodeInvalidRequest {
		t.Fatalf("want invalid_request for a bad agent_type, got %v", err)
	}
}

// TestAgentEvictedAndBack cuts an agent off (its link held, as in a partition) until the
// registry evicts it, then lets it through: it registers again under the same instance id.
// An agent whose connection dies is evicted and stays gone.
func TestAgentEvictedAndBack(t *testing.T) {
	e := newEnv(t, nil)
	proxy, err := harness.StartProxy(fmt.Sprintf("127.0.0.1:%d", e.nats.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	nc, err := ar.Connect(proxy.URL(), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var ev events
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := ar.NewClient(nc, ar.Options{Prefix: e.prefix, Timeout: 300 * time.Millisecond})
	agent, err := ar.StartAgent(ctx, client, spec("flaky", "x.flake"), echo, ar.AgentOptions{InstanceID: "flaky-1", HeartbeatInterval: 100 * time.Millisecond, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	// The registration in the view first: else "no instance" below could be a view that never held it.
	if ids := e.instances("flaky", ar.MinRevision(agent.Registration().Revision)); len(ids) != 1 {
		t.Fatalf("instances after registering: %v", ids)
	}

	proxy.Pause()
	eventually(t, "the registry evicts the cut-off agent", func() bool { return len(e.instances("flaky")) == 0 })
	proxy.Resume()
	eventually(t, "the agent registers again", func() bool {
		ids := e.instances("flaky")
		return len(ids) == 1 && ids[0] == "flaky-1"
	})
	if ev.count(ar.EventReregistered, ar.CodeUnknownInstance) == 0 {
		t.Fatalf("no re-registration for unknown_instance: %+v", ev.all)
	}
	reply, err := e.nc.Request("agent.tasks.flaky", []byte("again"), 5*time.Second)
	if err != nil || string(reply.Data) != "done: again" {
		t.Fatalf("task after coming back: %v %v", reply, err)
	}

	// Killed: the connection is gone, nothing deregisters, the registry evicts.
	nc.Close()
	eventually(t, "the killed agent is evicted", func() bool { return len(e.instances("flaky")) == 0 })
	cancel()
	<-agent.Done()
}

// TestAgentSurvivesReconnect cuts the agent's connection: nats.go reconnects, the agent
// registers again (the registry may have lost it meanwhile) and goes on serving tasks.
func TestAgentSurvivesReconnect(t *testing.T) {
	e := newEnv(t, nil)
	proxy, err := harness.StartProxy(fmt.Sprintf("127.0.0.1:%d", e.nats.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	nc, err := ar.Connect(proxy.URL(), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var ev events
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent, err := ar.StartAgent(ctx, ar.NewClient(nc, ar.Options{Prefix: e.prefix}), spec("steady", "x.steady"), echo, ar.AgentOptions{HeartbeatInterval: 200 * time.Millisecond, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	id := agent.InstanceID()

	proxy.Drop()
	eventually(t, "re-registered after the reconnect", func() bool { return ev.count(ar.EventReregistered, "reconnect") > 0 })
	eventually(t, "tasks served after the reconnect", func() bool {
		reply, err := e.nc.Request("agent.tasks.steady", []byte("ping"), time.Second)
		return err == nil && string(reply.Data) == "done: ping"
	})
	if ids := e.instances("steady"); len(ids) != 1 || ids[0] != id {
		t.Fatalf("instances: %v, want [%s]", ids, id)
	}
	cancel()
	if err := agent.Wait(); err != nil {
		t.Fatal(err)
	}
	// The deregister reply's revision is not at hand: wait for the view to show the agent gone.
	eventually(t, "steady gone from the registry's view", func() bool { return len(e.instances("steady")) == 0 })
}

// TestAgentWaitsForTheRegistry starts an agent while no registry runs: StartAgent keeps
// trying, and returns registered once the registry is up.
func TestAgentWaitsForTheRegistry(t *testing.T) {
	e := newEnv(t, nil)
	e.registry.Kill()
	var ev events
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type started struct {
		agent *ar.Agent
		err   error
	}
	done := make(chan started, 1)
	go func() {
		a, err := ar.StartAgent(ctx, e.client, spec("patient", "x.wait"), echo, ar.AgentOptions{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, OnEvent: ev.add})
		done <- started{a, err}
	}()
	eventually(t, "failed attempts while the registry is away", func() bool { return ev.count(ar.EventError, "") >= 2 })
	if err := e.registry.Start(); err != nil {
		t.Fatal(err)
	}
	s := <-done
	if s.err != nil {
		t.Fatal(s.err)
	}
	if ids := e.instances("patient", ar.MinRevision(s.agent.Registration().Revision)); len(ids) != 1 || ids[0] != s.agent.InstanceID() {
		t.Fatalf("instances %v, agent %s", ids, s.agent.InstanceID())
	}
	cancel()
	if err := s.agent.Wait(); err != nil {
		t.Fatal(err)
	}
}
