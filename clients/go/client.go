package agentregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultPrefix is the first token of every registry subject (the service's REGISTRY_PREFIX).
const DefaultPrefix = "registry"

// DefaultTimeout bounds a request whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// Options of a Client.
type Options struct {
	// Prefix is the registry's subject prefix; default "registry".
	Prefix string
	// Tenant scopes every query to registry.tenant.<tenant>.<op> (shared agents plus the
	// tenant's) and every write to the tenant's write subjects; empty means shared only.
	Tenant string
	// Timeout bounds each request whose context has no deadline; default 5 s.
	Timeout time.Duration
}

// Client sends the registry's queries and writes over one NATS connection. It is safe for
// concurrent use; the connection stays the caller's to close.
type Client struct {
	nc      *nats.Conn
	prefix  string
	tenant  string
	timeout time.Duration
}

// NewClient returns a client on nc.
func NewClient(nc *nats.Conn, opts Options) *Client {
	c := &Client{nc: nc, prefix: opts.Prefix, tenant: opts.Tenant, timeout: opts.Timeout}
	if c.prefix == "" {
		c.prefix = DefaultPrefix
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c
}

// WithTenant returns a client of the same connection scoped to tenant ("" for shared only).
func (c *Client) WithTenant(tenant string) *Client {
	cp := *c
	cp.tenant = tenant
	return &cp
}

// Conn is the client's NATS connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

// Prefix is the registry's subject prefix.
func (c *Client) Prefix() string { return c.prefix }

// Tenant is the tenant the client is scoped to ("" for shared agents only).
func (c *Client) Tenant() string { return c.tenant }

// QueryOption adjusts one query.
type QueryOption func(*queryOptions)

type queryOptions struct{ minRevision uint64 }

// MinRevision makes the answering replica wait (up to 2 s) until its view has applied
// revision; otherwise the query fails with stale_view. Pass a write's revision to read it.
func MinRevision(revision uint64) QueryOption {
	return func(o *queryOptions) { o.minRevision = revision }
}

// root is where the tenant's subjects start.
func (c *Client) root() string {
	if c.tenant != "" {
		return c.prefix + ".tenant." + c.tenant
	}
	return c.prefix
}

func (c *Client) querySubject(op string) string { return c.root() + "." + op }

// query sends body (with min_revision when asked) to op and decodes the reply into out.
func (c *Client) query(ctx context.Context, op string, body any, out any, opts []QueryOption) error {
	return c.queryAt(ctx, c.querySubject(op), op, body, out, opts)
}

// queryAt is query on a subject of its own (the operators' ones are under no tenant).
func (c *Client) queryAt(ctx context.Context, subject, op string, body any, out any, opts []QueryOption) error {
	var o queryOptions
	for _, opt := range opts {
		opt(&o)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("agentregistry: %s: encode: %w", op, err)
	}
	if o.minRevision > 0 {
		data = withMinRevision(data, o.minRevision)
	}
	return c.request(ctx, subject, data, out)
}

// withMinRevision adds "min_revision" to a JSON object's text.
func withMinRevision(obj []byte, rev uint64) []byte {
	out := make([]byte, 0, len(obj)+32)
	out = append(out, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"min_revision":`...)
	out = strconv.AppendUint(out, rev, 10)
	return append(out, '}')
}

// request sends data to subject and decodes a success into out, or returns the *Error.
func (c *Client) request(ctx context.Context, subject string, data []byte, out any) error {
	var msg *nats.Msg
	var err error
	switch _, hasDeadline := ctx.Deadline(); {
	case ctx.Done() == nil:
		// A context that never ends (context.Background): the client's timeout, no timer of its own.
		msg, err = c.nc.Request(subject, data, c.timeout)
	case !hasDeadline:
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
		msg, err = c.nc.RequestWithContext(ctx, subject, data)
	default:
		msg, err = c.nc.RequestWithContext(ctx, subject, data)
	}
	if err != nil {
		return fmt.Errorf("agentregistry: request %s: %w", subject, err)
	}
	if rerr := replyError(subject, msg); rerr != nil {
		return rerr
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		return fmt.Errorf("agentregistry: reply of %s: %w", subject, err)
	}
	return nil
}
