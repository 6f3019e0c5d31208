package agentregistry_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	ar "github.com/agent-registry/agent-registry/clients/go"
	"github.com/nats-io/nats.go"
)

// The approval gate's operator ops (protocol v1.2, docs/trust.md) on a registry whose trust
// file sets tenant acme's approval to manual: a new acme spec waits, listed by Pending and
// routed by no query of acme's until Approve; Reject keeps it out with a reason; refusals are
// *Error codes; each decision is an event whose data carries State, By and Reason.
func TestApprovalGate(t *testing.T) {
	trust := filepath.Join(t.TempDir(), "trust.json")
	if err := os.WriteFile(trust, []byte(`{"tenants":{"acme":{"approval":"manual"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nil, "REGISTRY_TRUST_FILE="+trust)
	ctx := e.ctx()
	operator := e.client
	acme := e.client.WithTenant("acme")

	var mu sync.Mutex
	var events []ar.CloudEvent
	sub, err := e.nc.Subscribe(e.prefix+".agent.*.acme-invoices", func(m *nats.Msg) {
		var ev ar.CloudEvent
		if json.Unmarshal(m.Data, &ev) == nil {
			mu.Lock()
			events = append(events, ev)
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

	register := func(agentType string) *ar.RegisterReply {
		t.Helper()
		r, err := acme.Register(ctx, ar.RegisterRequest{Spec: spec(agentType, agentType+".run"), InstanceID: "i-1", Status: ar.StatusReady, HeartbeatIntervalMs: 60000})
		if err != nil {
			t.Fatalf("register %s: %v", agentType, err)
		}
		return r
	}
	providers := func(agentType string, rev uint64) []string {
		t.Helper()
		r, err := acme.Lookup(ctx, ar.LookupRequest{Capability: agentType + ".run"}, ar.MinRevision(rev))
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, p := range r.Providers {
			got = append(got, p.AgentType)
		}
		return got
	}
	pendingTypes := func(req ar.PendingRequest, rev uint64) []string {
		t.Helper()
		got := []string{}
		for a, err := range operator.PendingAll(ctx, req, ar.MinRevision(rev)) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a.AgentType)
		}
		return got
	}

	reg := register("acme-invoices")
	if reg.Approval == nil || reg.Approval.State != ar.ApprovalPending {
		t.Fatalf("register reply approval: %+v", reg.Approval)
	}

	t.Run("a new spec waits: pending lists it, no query routes to it", func(t *testing.T) {
		got, err := acme.Get(ctx, "acme-invoices", ar.MinRevision(reg.Revision))
		if err != nil {
			t.Fatal(err)
		}
		if got.Agent.Approval == nil || got.Agent.Approval.State != ar.ApprovalPending || got.Agent.Routable() {
			t.Fatalf("get: approval %+v", got.Agent.Approval)
		}
		if p := providers("acme-invoices", reg.Revision); len(p) != 0 {
			t.Fatalf("lookup of a pending spec: %v", p)
		}
		page, err := operator.Pending(ctx, ar.PendingRequest{Tenant: "acme"}, ar.MinRevision(reg.Revision))
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Agents) != 1 || page.Agents[0].AgentType != "acme-invoices" || page.Agents[0].TenantScope == nil || *page.Agents[0].TenantScope != "acme" {
			t.Fatalf("pending: %+v", page)
		}
		if got := pendingTypes(ar.PendingRequest{Page: ar.Page{Limit: 1}}, reg.Revision); !slices.Equal(got, []string{"acme-invoices"}) {
			t.Fatalf("PendingAll: %v", got)
		}
		if got := pendingTypes(ar.PendingRequest{SharedOnly: true}, reg.Revision); len(got) != 0 {
			t.Fatalf("pending of shared agents: %v", got)
		}
	})

	t.Run("approve makes it routable", func(t *testing.T) {
		got, err := acme.Get(ctx, "acme-invoices", ar.MinRevision(reg.Revision))
		if err != nil {
			t.Fatal(err)
		}
		r, err := operator.Approve(ctx, "acme-invoices", ar.ApproveRequest{By: "alice", Version: "1.0.0", Revision: got.Agent.Revision, Reason: "reviewed"})
		if err != nil {
			t.Fatal(err)
		}
		if r.AgentType != "acme-invoices" || r.TenantScope == nil || *r.TenantScope != "acme" || r.Approval.State != ar.ApprovalApproved || r.Approval.By != "alice" || r.Approval.Reason != "reviewed" || r.Approval.At == "" {
			t.Fatalf("approve: %+v", r)
		}
		if p := providers("acme-invoices", r.Revision); !slices.Equal(p, []string{"acme-invoices"}) {
			t.Fatalf("lookup after approve: %v", p)
		}
		if got := pendingTypes(ar.PendingRequest{Tenant: "acme"}, r.Revision); len(got) != 0 {
			t.Fatalf("pending after approve: %v", got)
		}
		_, err = operator.Approve(ctx, "acme-invoices", ar.ApproveRequest{By: "alice"})
		if !errors.Is(err, ar.ErrConflict) {
			t.Fatalf("approving again: %v", err)
		}
	})

	t.Run("reject keeps it out with its reason", func(t *testing.T) {
		r, err := operator.Reject(ctx, "acme-invoices", ar.RejectRequest{By: "bob", Reason: "no ledger check", Version: "1.0.0"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Approval.State != ar.ApprovalRejected || r.Approval.By != "bob" || r.Approval.Reason != "no ledger check" {
			t.Fatalf("reject: %+v", r)
		}
		if p := providers("acme-invoices", r.Revision); len(p) != 0 {
			t.Fatalf("lookup after reject: %v", p)
		}
		page, err := operator.Pending(ctx, ar.PendingRequest{Tenant: "acme", State: ar.ApprovalRejected}, ar.MinRevision(r.Revision))
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Agents) != 1 || page.Agents[0].Approval == nil || page.Agents[0].Approval.Reason != "no ledger check" {
			t.Fatalf("rejected list: %+v", page)
		}
	})

	t.Run("refusals are *Error codes and decide nothing", func(t *testing.T) {
		_, err := operator.Approve(ctx, "acme-nobody", ar.ApproveRequest{By: "alice"})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeNotFound || rerr.Status != 404 {
			t.Fatalf("unknown type: %+v", rerr)
		}
		_, err = operator.Approve(ctx, "acme-invoices", ar.ApproveRequest{By: "alice", Version: "9.9.9"})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeConflict || rerr.Status != 409 {
			t.Fatalf("another version: %+v", rerr)
		}
		_, err = operator.Approve(ctx, "acme-invoices", ar.ApproveRequest{By: "alice", Revision: 1})
		if !errors.Is(err, ar.ErrConflict) {
			t.Fatalf("another revision: %v", err)
		}
		_, err = operator.Reject(ctx, "acme-invoices", ar.RejectRequest{By: "alice"})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeInvalidRequest || !slices.ContainsFunc(rerr.Issues, func(i ar.Issue) bool { return i.Path == "reason" }) {
			t.Fatalf("rejection without a reason: %+v", rerr)
		}
		_, err = operator.Approve(ctx, "acme.*", ar.ApproveRequest{By: "alice"})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeInvalidRequest || rerr.Subject != "" {
			t.Fatalf("a type that is no subject token: %+v", rerr)
		}
		_, err = operator.Pending(ctx, ar.PendingRequest{Tenant: "acme", SharedOnly: true})
		if err == nil {
			t.Fatal("Tenant and SharedOnly both: want an error")
		}
		got, err := acme.Get(ctx, "acme-invoices")
		if err != nil {
			t.Fatal(err)
		}
		if got.Agent.Approval == nil || got.Agent.Approval.State != ar.ApprovalRejected {
			t.Fatalf("after the refusals: %+v", got.Agent.Approval)
		}
		// A shared agent is under auto: approved by policy, so a decision changes nothing.
		shared, err := operator.Register(ctx, ar.RegisterRequest{Spec: spec("shared-search", "shared-search.run"), HeartbeatIntervalMs: 60000})
		if err != nil {
			t.Fatal(err)
		}
		if shared.Approval != nil {
			t.Fatalf("shared agent's approval: %+v", shared.Approval)
		}
		_, err = operator.Approve(ctx, "shared-search", ar.ApproveRequest{By: "alice"})
		if !errors.Is(err, ar.ErrConflict) {
			t.Fatalf("approving a spec approved by policy: %v", err)
		}
	})

	t.Run("each decision is an event with who and why", func(t *testing.T) {
		type decision struct{ typ, state, by, reason string }
		want := []decision{
			{ar.EventAgentPending, ar.ApprovalPending, "", ""},
			{ar.EventAgentApproved, ar.ApprovalApproved, "alice", "reviewed"},
			{ar.EventAgentRejected, ar.ApprovalRejected, "bob", "no ledger check"},
		}
		var got []decision
		eventually(t, "the three approval events", func() bool {
			mu.Lock()
			defer mu.Unlock()
			got = got[:0]
			for _, ev := range events {
				if !slices.Contains([]string{ar.EventAgentPending, ar.EventAgentApproved, ar.EventAgentRejected}, ev.Type) {
					continue
				}
				var d ar.AgentEventData
				if err := json.Unmarshal(ev.Data, &d); err != nil {
					t.Errorf("event data: %v", err)
					return false
				}
				got = append(got, decision{ev.Type, d.State, d.By, d.Reason})
			}
			return len(got) >= len(want)
		})
		if !slices.Equal(got, want) {
			t.Fatalf("approval events: %+v", got)
		}
	})
}
