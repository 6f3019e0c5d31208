package agentregistry

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// LiveOptions tune a LiveRegistry.
type LiveOptions struct {
	// Resync reloads the whole view this often, as a safety net for events lost on the way
	// (core NATS delivers at most once); default 1 minute, negative turns it off. The view is
	// also reloaded after every reconnect of the NATS connection.
	Resync time.Duration
	// RetryAfter is how long an update that could not be fetched (the registry away) waits
	// before it is tried again; default 500 ms.
	RetryAfter time.Duration
	// OnError receives the errors of background updates (the registry unreachable, ...).
	OnError func(error)
}

// LiveRegistry answers Registry from a local view of the live registry: loaded once, then
// kept current from the registry.agent.* events, one get per changed agent type. Answers
// come from memory, so they go on during a registry outage, with the fleet as last seen.
// Close it when done.
type LiveRegistry struct {
	c    *Client
	opts LiveOptions
	snap atomic.Pointer[fleet]
	rev  atomic.Uint64

	mu      sync.Mutex
	agents  map[string]liveAgent
	pending map[string]uint64 // agent types to fetch again, with the revision to wait for
	full    bool              // a whole reload is due
	wake    chan struct{}

	subs   []*nats.Subscription
	cancel context.CancelFunc
	done   chan struct{}
}

var _ Registry = (*LiveRegistry)(nil)

// liveAgent is an agent type as last fetched; gone marks one removed at revision rev.
type liveAgent struct {
	entry *fleetEntry
	rev   uint64
	gone  bool
}

// NewLiveRegistry loads the view through c (its tenant scope decides which agents are seen)
// and starts following events. It fails only when the first load fails.
func NewLiveRegistry(ctx context.Context, c *Client, opts LiveOptions) (*LiveRegistry, error) {
	if opts.Resync == 0 {
		opts.Resync = time.Minute
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = 500 * time.Millisecond
	}
	r := &LiveRegistry{c: c, opts: opts, agents: map[string]liveAgent{}, pending: map[string]uint64{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.snap.Store(newFleet(nil))
	// Subscribe before loading, so nothing that happens during the load is missed.
	for _, ev := range []string{"registered", "deregistered", "status_changed"} {
		sub, err := c.nc.Subscribe(c.prefix+".agent."+ev+".*", r.onEvent)
		if err != nil {
			r.unsubscribe()
			return nil, err
		}
		r.subs = append(r.subs, sub)
	}
	if err := r.reload(ctx); err != nil {
		r.unsubscribe()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go r.run(runCtx)
	return r, nil
}

// Close stops following the registry; the view keeps answering as last seen.
func (r *LiveRegistry) Close() {
	r.unsubscribe()
	if r.cancel != nil {
		r.cancel()
		<-r.done
	}
}

func (r *LiveRegistry) unsubscribe() {
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
}

// Revision is the highest store revision the view reflects.
func (r *LiveRegistry) Revision() uint64 { return r.rev.Load() }

// Route implements Registry.
func (r *LiveRegistry) Route(skillID string) (AgentSpec, error) { return r.snap.Load().route(skillID) }

// RouteByScore implements Registry.
func (r *LiveRegistry) RouteByScore(req RoutingRequest) (RouteResult, error) {
	return r.snap.Load().routeByScore(req)
}

// FindBySkill implements Registry.
func (r *LiveRegistry) FindBySkill(skillID string) []AgentSpec {
	return r.snap.Load().findBySkill(skillID)
}

// FindByTag implements Registry.
func (r *LiveRegistry) FindByTag(tag string) []AgentSpec { return r.snap.Load().findByTag(tag) }

// FindByName implements Registry.
func (r *LiveRegistry) FindByName(name string) (AgentSpec, bool) {
	return r.snap.Load().findByName(name)
}

// All implements Registry.
func (r *LiveRegistry) All() []AgentSpec { return r.snap.Load().all() }

// onEvent marks the event's agent type for a fetch; the worker does the I/O.
func (r *LiveRegistry) onEvent(msg *nats.Msg) {
	var ev struct {
		Data struct {
			AgentType string `json:"agent_type"`
			Revision  uint64 `json:"revision"`
		} `json:"data"`
	}
	if json.Unmarshal(msg.Data, &ev) != nil || ev.Data.AgentType == "" {
		return
	}
	r.mu.Lock()
	if ev.Data.Revision > r.pending[ev.Data.AgentType] || r.pending[ev.Data.AgentType] == 0 {
		r.pending[ev.Data.AgentType] = ev.Data.Revision
	}
	r.mu.Unlock()
	r.signal()
}

func (r *LiveRegistry) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run applies pending updates, reloads after reconnects and on the resync period, and
// retries what failed while the registry was away.
func (r *LiveRegistry) run(ctx context.Context) {
	defer close(r.done)
	reconnects := r.c.nc.Stats().Reconnects
	lastFull := time.Now()
	poll := time.NewTicker(r.opts.RetryAfter)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-poll.C:
		}
		if n := r.c.nc.Stats().Reconnects; n != reconnects {
			reconnects = n
			r.setFull()
		}
		if r.opts.Resync > 0 && time.Since(lastFull) >= r.opts.Resync {
			r.setFull()
		}
		r.mu.Lock()
		full := r.full
		r.mu.Unlock()
		if full {
			if err := r.reload(ctx); err != nil {
				r.report(err)
				continue
			}
			lastFull = time.Now()
		}
		r.applyPending(ctx)
	}
}

func (r *LiveRegistry) setFull() {
	r.mu.Lock()
	r.full = true
	r.mu.Unlock()
}

func (r *LiveRegistry) report(err error) {
	if r.opts.OnError != nil && !errors.Is(err, context.Canceled) {
		r.opts.OnError(err)
	}
}

// applyPending fetches each marked agent type; one that cannot be fetched stays marked.
func (r *LiveRegistry) applyPending(ctx context.Context) {
	r.mu.Lock()
	work := r.pending
	r.pending = map[string]uint64{}
	r.mu.Unlock()
	changed := false
	for agentType, rev := range work {
		reply, err := r.c.Get(ctx, agentType, MinRevision(rev))
		var rerr *Error
		switch {
		case err == nil:
			changed = r.put(reply.Agent, reply.Revision) || changed
		case errors.As(err, &rerr) && rerr.Code == CodeNotFound:
			changed = r.remove(agentType, rev) || changed
		default:
			r.report(err)
			r.mu.Lock()
			if r.pending[agentType] < rev {
				r.pending[agentType] = rev
			}
			r.mu.Unlock()
		}
	}
	if changed {
		r.publish()
	}
}

// reload lists the whole fleet and replaces what is older than the listing.
func (r *LiveRegistry) reload(ctx context.Context) error {
	type page struct {
		views []AgentView
		rev   uint64
	}
	var got []page
	req := ListRequest{Limit: 1000}
	var listRev uint64
	for {
		var opts []QueryOption
		if listRev > 0 {
			opts = append(opts, MinRevision(listRev))
		}
		reply, err := r.c.List(ctx, req, opts...)
		if err != nil {
			return err
		}
		got = append(got, page{reply.Agents, reply.Revision})
		listRev = max(listRev, reply.Revision)
		if reply.NextCursor == nil || *reply.NextCursor == "" {
			break
		}
		req.Cursor = *reply.NextCursor
	}
	seen := map[string]bool{}
	for _, p := range got {
		for _, v := range p.views {
			seen[v.AgentType] = true
			r.put(v, p.rev)
		}
	}
	r.mu.Lock()
	for t, a := range r.agents {
		if !seen[t] && !a.gone && a.rev <= listRev {
			r.agents[t] = liveAgent{rev: listRev, gone: true}
		}
	}
	r.full = false
	r.mu.Unlock()
	if listRev > r.rev.Load() {
		r.rev.Store(listRev)
	}
	r.publish()
	return nil
}

// put stores a view fetched at rev unless a newer answer is already held.
func (r *LiveRegistry) put(v AgentView, rev uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.agents[v.AgentType]; ok && old.rev > rev {
		return false
	}
	if v.Status == StatusDeregistered {
		r.agents[v.AgentType] = liveAgent{rev: rev, gone: true}
	} else {
		order := int64(0)
		if t, err := time.Parse(time.RFC3339Nano, v.RegisteredAt); err == nil {
			order = t.UnixMilli()
		}
		r.agents[v.AgentType] = liveAgent{entry: newFleetEntry(v.AgentSpec, v.Status == StatusReady, order), rev: rev}
	}
	if rev > r.rev.Load() {
		r.rev.Store(rev)
	}
	return true
}

func (r *LiveRegistry) remove(agentType string, rev uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.agents[agentType]; ok && old.rev > rev {
		return false
	}
	r.agents[agentType] = liveAgent{rev: rev, gone: true}
	return true
}

// publish swaps in a new immutable snapshot for the readers.
func (r *LiveRegistry) publish() {
	r.mu.Lock()
	entries := make([]*fleetEntry, 0, len(r.agents))
	for _, a := range r.agents {
		if !a.gone {
			entries = append(entries, a.entry)
		}
	}
	r.mu.Unlock()
	r.snap.Store(newFleet(entries))
}
