package agentregistry

import (
	"context"
	"regexp"
)

// A tenant's trust roots in the registry's bucket (protocol v1.2, docs/trust.md "Trust roots in
// the bucket"): the operator sets, reads and deletes a tenant's entry over NATS instead of in
// the trust file on each replica's disk, and every replica follows it. The subjects are
// registry.trust.{set,get,delete}.<tenant>, under no tenant whatever the client's (only the
// operator role may publish there under auth.conf).

// The trust modes of a tenant's entry.
const (
	TrustModeOff             = "off"
	TrustModeVerifyIfPresent = "verify-if-present"
	TrustModeRequire         = "require"
)

// Where a tenant's trust roots in force come from (TrustRootsReply.InForce): the trust file wins
// over the bucket for a tenant it names.
const (
	TrustInForceFile   = "file"
	TrustInForceBucket = "bucket"
	TrustInForceNone   = "none"
)

// tenantRE is the registry's tenant token: a tenant is one subject token.
var tenantRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$`)

// TenantTrust is a tenant's entry as the trust file writes one. Empty members are not sent and
// were not stored: the registry applies the file's defaults (mode off, approval auto). In the
// bucket the keys are inline only (JWKS): JWKSFile and JWKSURL belong to the trust file, and a
// set carrying either is refused (CodeInvalidRequest, nothing stored).
type TenantTrust struct {
	Mode     string        `json:"mode,omitempty"`
	Approval string        `json:"approval,omitempty"`
	JWKS     *TrustJWKS    `json:"jwks,omitempty"`
	Signers  []TrustSigner `json:"signers,omitempty"`
	JWKSFile string        `json:"jwks_file,omitempty"`
	JWKSURL  any           `json:"jwks_url,omitempty"`
}

// TrustJWKS is a JWK set inline: public keys only, each with "kid" and "alg".
type TrustJWKS struct {
	Keys []map[string]any `json:"keys"`
}

// TrustSigner is one grant: key KID may sign for AgentTypes (patterns where * stands for any
// run of characters) on behalf of Publisher, optionally from NotBefore until NotAfter (ISO 8601).
type TrustSigner struct {
	KID        string   `json:"kid"`
	Publisher  string   `json:"publisher"`
	AgentTypes []string `json:"agent_types"`
	NotBefore  string   `json:"not_before,omitempty"`
	NotAfter   string   `json:"not_after,omitempty"`
}

// TrustSetRequest is the body of registry.trust.set.<tenant>. By names who sets the roots (the
// operator's word). Revision, when not nil, makes the set a compare-and-set on the entry read
// (0: none stored yet): another stored revision is a conflict, so two operators never overwrite
// each other unseen; nil replaces whatever is stored.
type TrustSetRequest struct {
	Trust    TenantTrust `json:"trust"`
	By       string      `json:"by,omitempty"`
	Revision *uint64     `json:"revision,omitempty"`
}

// TrustDeleteRequest is the body of registry.trust.delete.<tenant>; Revision as TrustSetRequest's.
type TrustDeleteRequest struct {
	By       string  `json:"by,omitempty"`
	Revision *uint64 `json:"revision,omitempty"`
}

// TrustRootsReply answers SetTrustRoots, GetTrustRoots and DeleteTrustRoots: the entry the bucket
// holds for Tenant (nil: none, or just deleted) at Revision (nil: none stored), who set it (or
// deleted it), and InForce, where the tenant's roots in force come from on the replica that
// answered (TrustInForceFile, TrustInForceBucket or TrustInForceNone).
type TrustRootsReply struct {
	Tenant   string       `json:"tenant"`
	Trust    *TenantTrust `json:"trust"`
	By       *string      `json:"by"`
	Revision *uint64      `json:"revision"`
	InForce  string       `json:"in_force"`
}

// ExpectRevision returns a pointer to rev, for TrustSetRequest.Revision and TrustDeleteRequest.Revision
// (where 0 means none stored, which a plain zero could not say apart from "no revision").
func ExpectRevision(rev uint64) *uint64 { return &rev }

// SetTrustRoots sets (or replaces) a tenant's trust roots in the bucket. A *Error with
// CodeInvalidRequest for a bad entry (a jwks_file or jwks_url, a private key, a grant without
// its key; its Issues name the field); CodeConflict when Revision is not the stored entry's or
// the trust file names the tenant (the file wins). Nothing is stored on any error.
func (c *Client) SetTrustRoots(ctx context.Context, tenant string, req TrustSetRequest) (*TrustRootsReply, error) {
	return operatorCall[TrustRootsReply](ctx, c, "trust", "set", tenantToken(tenant), req)
}

// GetTrustRoots returns a tenant's trust roots as the bucket holds them, and where the roots in
// force come from.
func (c *Client) GetTrustRoots(ctx context.Context, tenant string) (*TrustRootsReply, error) {
	return operatorCall[TrustRootsReply](ctx, c, "trust", "get", tenantToken(tenant), struct{}{})
}

// DeleteTrustRoots deletes a tenant's trust roots from the bucket: CodeNotFound when none are
// stored, CodeConflict when Revision is not the stored entry's.
func (c *Client) DeleteTrustRoots(ctx context.Context, tenant string, req TrustDeleteRequest) (*TrustRootsReply, error) {
	return operatorCall[TrustRootsReply](ctx, c, "trust", "delete", tenantToken(tenant), req)
}
