package agentregistry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	ar "github.com/agent-registry/agent-registry/clients/go"
	"github.com/agent-registry/agent-registry/clients/go/internal/harness"
	"github.com/nats-io/nats.go"
)

// eventually polls cond until it holds; the test fails when it does not within 30 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after 30 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func routeOf(reg ar.Registry, skill string) string {
	s, err := reg.Route(skill)
	if err != nil {
		var rerr *ar.Error
		if errors.As(err, &rerr) {
			return rerr.Code
		}
		return err.Error()
	}
	return s.AgentType
}

// TestLiveRegistryFollowsEventsAndOutlivesOutages: the live view follows registrations,
// status changes and removals from events, answers unchanged while the registry is down,
// and follows again once it is back.
func TestLiveRegistryFollowsEventsAndOutlivesOutages(t *testing.T) {
	e := newEnv(t, nil)
	live, err := ar.NewLiveRegistry(e.ctx(), e.client, ar.LiveOptions{OnError: func(err error) { t.Logf("live view: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if len(live.All()) != 0 {
		t.Fatalf("empty registry, view %v", names(live.All()))
	}

	alpha := e.register(spec("alpha", "x.do"))
	eventually(t, "alpha in the view", func() bool { return routeOf(live, "x.do") == "alpha" })
	heavy := spec("beta", "x.do")
	heavy.Weight = 2
	beta := e.register(heavy)
	eventually(t, "beta outweighs alpha", func() bool { return routeOf(live, "x.do") == "beta" })
	if live.Revision() < beta.Revision {
		t.Fatalf("view revision %d, beta's registration %d", live.Revision(), beta.Revision)
	}
	// A draining agent is known but not routed.
	if _, err := e.client.Heartbeat(e.ctx(), "beta", beta.InstanceID, ar.HeartbeatRequest{Status: ar.StatusDraining}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "draining beta no longer routed", func() bool { return routeOf(live, "x.do") == "alpha" })
	if got := names(live.FindBySkill("x.do")); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("FindBySkill: %v", got)
	}

	// Outage: the registry process is gone; the view answers as last seen.
	e.registry.Kill()
	if _, err := e.client.Get(e.ctx(), "alpha"); !ar.IsUnreachable(err) {
		t.Fatalf("registry should be unreachable, got %v", err)
	}
	if got := routeOf(live, "x.do"); got != "alpha" {
		t.Fatalf("route during the outage: %s", got)
	}
	if got := names(live.All()); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("All during the outage: %v", got)
	}

	// Back: changes made after the outage reach the view.
	if err := e.registry.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Deregister(e.ctx(), "alpha", alpha.InstanceID, "retired"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alpha gone from the view", func() bool {
		_, found := live.FindByName("alpha")
		return !found && routeOf(live, "x.do") == ar.CodeNoRoute
	})
	if got := names(live.All()); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("All after alpha left: %v", got)
	}
}

// TestLiveRegistryReloadsAfterReconnect loses the events of a registration on the way to the
// view (its connection is held, then cut) and checks that the reload after the reconnect
// brings the registration in: periodic resync is off, so only the reconnect can.
func TestLiveRegistryReloadsAfterReconnect(t *testing.T) {
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
	live, err := ar.NewLiveRegistry(e.ctx(), ar.NewClient(nc, ar.Options{Prefix: e.prefix}), ar.LiveOptions{Resync: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	proxy.Pause()
	e.register(spec("unseen", "x.unseen"))
	proxy.Drop()
	proxy.Resume()
	eventually(t, "the registration made while the view's link was down", func() bool { return routeOf(live, "x.unseen") == "unseen" })
	if nc.Stats().Reconnects == 0 {
		t.Fatal("the view's connection never reconnected")
	}
}

// TestLiveRegistryTenantScope: a view through a tenant's client holds the shared agents and
// the tenant's; the shared view holds the shared ones only.
func TestLiveRegistryTenantScope(t *testing.T) {
	e := newEnv(t, nil)
	acme := e.client.WithTenant("acme")
	shared, err := ar.NewLiveRegistry(e.ctx(), e.client, ar.LiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	tenantView, err := ar.NewLiveRegistry(e.ctx(), acme, ar.LiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tenantView.Close()

	e.register(spec("common", "x.common"))
	scoped := spec("acme-only", "x.common")
	tenant := "acme"
	scoped.TenantScope = &tenant
	scoped.Weight = 5
	if _, err := acme.Register(e.ctx(), ar.RegisterRequest{Spec: scoped}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tenant's view routes to its own agent", func() bool { return routeOf(tenantView, "x.common") == "acme-only" })
	eventually(t, "the shared view holds the shared agent", func() bool { return routeOf(shared, "x.common") == "common" })
	if got := names(tenantView.All()); !slices.Equal(got, []string{"acme-only", "common"}) {
		t.Fatalf("tenant view: %v", got)
	}
	if got := names(shared.All()); !slices.Equal(got, []string{"common"}) {
		t.Fatalf("shared view: %v", got)
	}
}
