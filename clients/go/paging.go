package agentregistry

import (
	"context"
	"iter"
)

// pages walks a paged query: fetch gets the page at cursor (reading at least minRev) and
// returns its items, its next cursor and its revision. Each page after the first asks for the
// previous page's revision, so no later page reflects an older view. The walk stops at the
// first error, which it yields once.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, cursor string, minRev uint64) ([]T, *string, uint64, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor, rev := "", uint64(0)
		for {
			items, next, r, err := fetch(ctx, cursor, rev)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil || *next == "" {
				return
			}
			cursor, rev = *next, r
		}
	}
}

func withRev(opts []QueryOption, rev uint64) []QueryOption {
	if rev == 0 {
		return opts
	}
	return append(append([]QueryOption(nil), opts...), MinRevision(rev))
}

// ListAll yields every agent type matching req, following next_cursor page by page.
func (c *Client) ListAll(ctx context.Context, req ListRequest, opts ...QueryOption) iter.Seq2[AgentView, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]AgentView, *string, uint64, error) {
		req.Cursor = cursor
		r, err := c.List(ctx, req, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Agents, r.NextCursor, r.Revision, nil
	})
}

// LookupAll yields every provider of a capability, best first.
func (c *Client) LookupAll(ctx context.Context, req LookupRequest, opts ...QueryOption) iter.Seq2[Provider, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]Provider, *string, uint64, error) {
		req.Cursor = cursor
		r, err := c.Lookup(ctx, req, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Providers, r.NextCursor, r.Revision, nil
	})
}

// CapabilitiesAll yields the whole capability projection.
func (c *Client) CapabilitiesAll(ctx context.Context, req CapabilitiesRequest, opts ...QueryOption) iter.Seq2[CapabilityEntry, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]CapabilityEntry, *string, uint64, error) {
		req.Cursor = cursor
		r, err := c.Capabilities(ctx, req, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Capabilities, r.NextCursor, r.Revision, nil
	})
}

// FindAll yields every agent type find matches.
func (c *Client) FindAll(ctx context.Context, req FindRequest, opts ...QueryOption) iter.Seq2[AgentView, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]AgentView, *string, uint64, error) {
		req.Cursor = cursor
		r, err := c.Find(ctx, req, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Agents, r.NextCursor, r.Revision, nil
	})
}

// DiscoverAll yields every discovered agent type.
func (c *Client) DiscoverAll(ctx context.Context, req DiscoverRequest, opts ...QueryOption) iter.Seq2[DiscoveredAgent, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]DiscoveredAgent, *string, uint64, error) {
		req.Cursor = cursor
		r, err := c.Discover(ctx, req, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Agents, r.NextCursor, r.Revision, nil
	})
}

// SchemasAll yields every stored schema version (of name, when not empty).
func (c *Client) SchemasAll(ctx context.Context, name string, limit int, opts ...QueryOption) iter.Seq2[SchemaSummary, error] {
	return pages(ctx, func(ctx context.Context, cursor string, rev uint64) ([]SchemaSummary, *string, uint64, error) {
		r, err := c.Schemas(ctx, name, Page{Limit: limit, Cursor: cursor}, withRev(opts, rev)...)
		if err != nil {
			return nil, nil, 0, err
		}
		return r.Schemas, r.NextCursor, r.Revision, nil
	})
}
