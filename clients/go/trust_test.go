package agentregistry_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// trustEntry is a tenant's entry with one key: the public Ed25519 key of RFC 8037 appendix A.2
// (the registry imports every key before storing it), granted to sign the tenant's agents.
func trustEntry(kid, tenant string) ar.TenantTrust {
	return ar.TenantTrust{
		Mode:     ar.TrustModeRequire,
		Approval: "auto", // the default, which the registry writes into the stored entry
		JWKS: &ar.TrustJWKS{Keys: []map[string]any{{
			"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "alg": "EdDSA", "kid": kid,
		}}},
		Signers: []ar.TrustSigner{{KID: kid, Publisher: "Globex Inc", AgentTypes: []string{tenant + "-*"}}},
	}
}

// A tenant's trust roots in the bucket (protocol v1.2, docs/trust.md "Trust roots in the
// bucket") on a real registry: set then get returns the entry and its revision, a stale
// revision is a conflict, a jwks_file is refused storing nothing, delete removes the entry.
func TestTrustRoots(t *testing.T) {
	e := newEnv(t, nil)
	ctx := e.ctx()
	operator := e.client.WithTenant("acme") // the trust ops go to registry.trust.*, whatever the client's tenant

	get := func(tenant string) *ar.TrustRootsReply {
		t.Helper()
		r, err := operator.GetTrustRoots(ctx, tenant)
		if err != nil {
			t.Fatalf("get %s: %v", tenant, err)
		}
		return r
	}
	set := func(tenant string, req ar.TrustSetRequest) *ar.TrustRootsReply {
		t.Helper()
		r, err := operator.SetTrustRoots(ctx, tenant, req)
		if err != nil {
			t.Fatalf("set %s: %v", tenant, err)
		}
		if r.Revision == nil {
			t.Fatalf("set %s: no revision in %+v", tenant, r)
		}
		return r
	}
	holds := func(r *ar.TrustRootsReply, want ar.TenantTrust, rev uint64, by string) {
		t.Helper()
		if r.Trust == nil || !reflect.DeepEqual(*r.Trust, want) || r.Revision == nil || *r.Revision != rev || r.By == nil || *r.By != by {
			t.Fatalf("stored roots: %+v (trust %+v), want revision %d by %s, trust %+v", r, r.Trust, rev, by, want)
		}
	}
	holdsNone := func(r *ar.TrustRootsReply) {
		t.Helper()
		if r.Trust != nil || r.Revision != nil || r.InForce != ar.TrustInForceNone {
			t.Fatalf("want no roots stored: %+v", r)
		}
	}

	t.Run("set then get returns the roots and their revision", func(t *testing.T) {
		holdsNone(get("globex"))
		stored := set("globex", ar.TrustSetRequest{Trust: trustEntry("globex-2026", "globex"), By: "alice", Revision: ar.ExpectRevision(0)})
		if stored.Tenant != "globex" || stored.InForce != ar.TrustInForceBucket {
			t.Fatalf("set: %+v", stored)
		}
		holds(stored, trustEntry("globex-2026", "globex"), *stored.Revision, "alice")
		got := get("globex")
		holds(got, trustEntry("globex-2026", "globex"), *stored.Revision, "alice")
		if got.InForce != ar.TrustInForceBucket || !slices.Equal(got.Trust.Signers[0].AgentTypes, []string{"globex-*"}) {
			t.Fatalf("get: %+v", got)
		}

		replaced := set("globex", ar.TrustSetRequest{Trust: trustEntry("globex-2027", "globex"), By: "bob", Revision: got.Revision})
		if *replaced.Revision <= *stored.Revision {
			t.Fatalf("revision after a replace: %d, before %d", *replaced.Revision, *stored.Revision)
		}
		holds(get("globex"), trustEntry("globex-2027", "globex"), *replaced.Revision, "bob")
	})

	t.Run("a stale revision is a conflict and changes nothing", func(t *testing.T) {
		first := set("initech", ar.TrustSetRequest{Trust: trustEntry("initech-1", "initech"), By: "alice", Revision: ar.ExpectRevision(0)})
		second := set("initech", ar.TrustSetRequest{Trust: trustEntry("initech-2", "initech"), By: "bob", Revision: first.Revision})

		_, err := operator.SetTrustRoots(ctx, "initech", ar.TrustSetRequest{Trust: trustEntry("initech-3", "initech"), By: "alice", Revision: first.Revision})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeConflict || rerr.Status != 409 {
			t.Fatalf("set at a stale revision: %+v", rerr)
		}
		_, err = operator.SetTrustRoots(ctx, "initech", ar.TrustSetRequest{Trust: trustEntry("initech-3", "initech"), Revision: ar.ExpectRevision(0)})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeConflict {
			t.Fatalf("set expecting none stored: %+v", rerr)
		}
		_, err = operator.DeleteTrustRoots(ctx, "initech", ar.TrustDeleteRequest{By: "alice", Revision: first.Revision})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeConflict {
			t.Fatalf("delete at a stale revision: %+v", rerr)
		}
		holds(get("initech"), trustEntry("initech-2", "initech"), *second.Revision, "bob")
	})

	t.Run("a jwks_file is refused and nothing is stored", func(t *testing.T) {
		withFile := trustEntry("hooli-1", "hooli")
		withFile.JWKSFile = "/etc/passwd"
		_, err := operator.SetTrustRoots(ctx, "hooli", ar.TrustSetRequest{Trust: withFile, By: "mallory", Revision: ar.ExpectRevision(0)})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeInvalidRequest || rerr.Status != 400 || !slices.ContainsFunc(rerr.Issues, func(i ar.Issue) bool { return i.Path == "trust.jwks_file" }) {
			t.Fatalf("a jwks_file: %+v", rerr)
		}
		holdsNone(get("hooli"))

		// Over an entry already stored, the refusal leaves it as it was.
		stored := set("hooli", ar.TrustSetRequest{Trust: trustEntry("hooli-1", "hooli"), By: "alice"})
		_, err = operator.SetTrustRoots(ctx, "hooli", ar.TrustSetRequest{Trust: withFile, By: "mallory"})
		if !errors.Is(err, ar.ErrInvalidRequest) {
			t.Fatalf("a jwks_file over a stored entry: %v", err)
		}
		holds(get("hooli"), trustEntry("hooli-1", "hooli"), *stored.Revision, "alice")

		_, err = operator.GetTrustRoots(ctx, "hooli.*")
		if rerr := codeOf(t, err); rerr.Code != ar.CodeInvalidRequest || rerr.Subject != "" {
			t.Fatalf("a tenant that is no subject token: %+v", rerr)
		}
	})

	t.Run("delete removes the roots", func(t *testing.T) {
		_, err := operator.DeleteTrustRoots(ctx, "umbrella", ar.TrustDeleteRequest{By: "alice"})
		if rerr := codeOf(t, err); rerr.Code != ar.CodeNotFound || rerr.Status != 404 {
			t.Fatalf("delete with nothing stored: %+v", rerr)
		}
		stored := set("umbrella", ar.TrustSetRequest{Trust: trustEntry("umbrella-1", "umbrella"), By: "alice", Revision: ar.ExpectRevision(0)})
		deleted, err := operator.DeleteTrustRoots(ctx, "umbrella", ar.TrustDeleteRequest{By: "bob", Revision: stored.Revision})
		if err != nil {
			t.Fatal(err)
		}
		if deleted.Tenant != "umbrella" || deleted.By == nil || *deleted.By != "bob" {
			t.Fatalf("delete: %+v", deleted)
		}
		holdsNone(deleted)
		holdsNone(get("umbrella"))
		_, err = operator.DeleteTrustRoots(ctx, "umbrella", ar.TrustDeleteRequest{})
		if !errors.Is(err, ar.ErrNotFound) {
			t.Fatalf("deleting again: %v", err)
		}
		// Deleted, none is stored: a set expecting none is accepted again.
		again := set("umbrella", ar.TrustSetRequest{Trust: trustEntry("umbrella-2", "umbrella"), Revision: ar.ExpectRevision(0)})
		if *again.Revision <= *stored.Revision {
			t.Fatalf("revision after setting again: %d, before %d", *again.Revision, *stored.Revision)
		}
	})
}
