package agentregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Handler serves one task sent to the agent's subject. Its reply (or its error, as the
// registry's error body with code "agent_error") is sent back when the task asked for one.
// ctx ends when the agent's drain timeout passes.
type Handler func(ctx context.Context, task *nats.Msg) ([]byte, error)

// AgentOptions tune an Agent; the zero value is usable.
type AgentOptions struct {
	// InstanceID of this replica (a pod name); the registry generates one when empty.
	InstanceID string
	// HeartbeatInterval to ask for; the registry bounds it and the agent uses the one it returns.
	HeartbeatInterval time.Duration
	// Metadata stored with the instance.
	Metadata map[string]string
	// Replace overwrites a different spec stored under the same version (PROTOCOL.md section 9).
	Replace bool
	// DrainTimeout bounds how long in-flight tasks may run after the context is cancelled; default 30 s.
	DrainTimeout time.Duration
	// RetryMin and RetryMax bound the backoff of registrations while the registry is away;
	// defaults 500 ms and 30 s.
	RetryMin, RetryMax time.Duration
	// OnEvent receives what happens to the agent (registrations, failed heartbeats, errors).
	OnEvent func(AgentEvent)
}

// AgentEvent types.
const (
	EventRegistered      = "registered"
	EventReregistered    = "reregistered"
	EventHeartbeatFailed = "heartbeat_failed"
	EventDeregistered    = "deregistered"
	EventError           = "error"
)

// AgentEvent is one thing that happened to an Agent.
type AgentEvent struct {
	Type string
	// Reason of a re-registration: "unknown_instance" or "reconnect".
	Reason string
	Err    error
	// Registration is the register reply of registered and reregistered events.
	Registration *RegisterReply
}

// Agent is one registered instance serving tasks. It registers, heartbeats with jitter on
// the interval the registry returns, registers again when the registry no longer knows it
// (unknown_instance, or after a reconnect), and serves tasks on the spec's subject in its
// consumer group. When the context given to StartAgent is cancelled it reports draining,
// stops taking tasks, lets those in flight finish, deregisters and is done.
type Agent struct {
	c       *Client
	spec    AgentSpec
	handler Handler
	opts    AgentOptions

	mu    sync.Mutex
	reg   RegisterReply
	sub   *nats.Subscription
	tasks sync.WaitGroup

	active   atomic.Int64
	taskCtx  context.Context
	stopTask context.CancelFunc
	done     chan struct{}
	err      error
}

// StartAgent registers spec through c and starts serving tasks with h. It returns once the
// registry accepted the spec; while the registry is unreachable or unavailable it keeps
// trying until ctx ends. A refusal (invalid_spec, conflict, ...) is returned as a *Error.
// A spec with a tenant_scope registers on that tenant's subjects.
func StartAgent(ctx context.Context, c *Client, spec AgentSpec, h Handler, opts AgentOptions) (*Agent, error) {
	if spec.TenantScope != nil && *spec.TenantScope != "" && c.tenant == "" {
		c = c.WithTenant(*spec.TenantScope)
	}
	if !agentTypeRE.MatchString(spec.AgentType) {
		return nil, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("agent_type %q is not a valid subject token (%s)", spec.AgentType, agentTypeRE)}
	}
	// What the schema refuses the registry refuses too: no need to wait for it to say so.
	if err := ValidateSpec(spec); err != nil {
		return nil, err
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.RetryMin <= 0 {
		opts.RetryMin = 500 * time.Millisecond
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 30 * time.Second
	}
	a := &Agent{c: c, spec: spec, handler: h, opts: opts, done: make(chan struct{})}
	a.taskCtx, a.stopTask = context.WithCancel(context.Background())
	reply, err := a.registerUntil(ctx, opts.InstanceID)
	if err != nil {
		a.stopTask()
		return nil, err
	}
	a.reg = *reply
	a.emit(AgentEvent{Type: EventRegistered, Registration: reply})
	sub, err := c.nc.QueueSubscribe(spec.NATSSubject, spec.ConsumerGroup, a.serve)
	if err == nil {
		// Once StartAgent returns, the server knows the subscription: tasks reach the agent.
		if err = c.nc.FlushTimeout(c.timeout); err != nil {
			_ = sub.Unsubscribe()
		}
	}
	if err != nil {
		a.stopTask()
		dctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		defer cancel()
		_, _ = c.Deregister(dctx, spec.AgentType, reply.InstanceID, "start failed")
		return nil, err
	}
	a.sub = sub
	go a.run(ctx)
	return a, nil
}

// InstanceID is the instance's id, as the registry returned it.
func (a *Agent) InstanceID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reg.InstanceID
}

// Registration is the latest register reply.
func (a *Agent) Registration() RegisterReply {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reg
}

// ActiveTasks is the number of tasks being served now.
func (a *Agent) ActiveTasks() int { return int(a.active.Load()) }

// Done is closed when the agent has drained and deregistered.
func (a *Agent) Done() <-chan struct{} { return a.done }

// Wait blocks until the agent is done and returns the deregistration's error, if any.
func (a *Agent) Wait() error {
	<-a.done
	return a.err
}

func (a *Agent) emit(ev AgentEvent) {
	if a.opts.OnEvent != nil {
		a.opts.OnEvent(ev)
	}
}

// serve runs one task in its own goroutine, so tasks run side by side.
func (a *Agent) serve(msg *nats.Msg) {
	a.tasks.Add(1)
	a.active.Add(1)
	go func() {
		defer a.tasks.Done()
		defer a.active.Add(-1)
		out, err := a.handler(a.taskCtx, msg)
		if msg.Reply == "" {
			return
		}
		if err != nil {
			body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "agent_error", "message": err.Error()}})
			reply := nats.NewMsg(msg.Reply)
			reply.Header.Set(headerErrorCode, "500")
			reply.Header.Set(headerError, err.Error())
			reply.Data = body
			_ = msg.RespondMsg(reply)
			return
		}
		_ = msg.Respond(out)
	}()
}

func (a *Agent) register(ctx context.Context, instanceID string) (*RegisterReply, error) {
	interval := 0
	if a.opts.HeartbeatInterval > 0 {
		interval = int(a.opts.HeartbeatInterval / time.Millisecond)
	}
	return a.c.Register(ctx, RegisterRequest{Spec: a.spec, InstanceID: instanceID, HeartbeatIntervalMs: interval, Metadata: a.opts.Metadata, Replace: a.opts.Replace})
}

// registerUntil retries a registration with backoff while the registry cannot answer it.
func (a *Agent) registerUntil(ctx context.Context, instanceID string) (*RegisterReply, error) {
	wait := a.opts.RetryMin
	for {
		reply, err := a.register(ctx, instanceID)
		if err == nil {
			return reply, nil
		}
		// Only an absent or busy registry is worth waiting for; a refusal is final.
		var rerr *Error
		retry := IsUnreachable(err) || errors.As(err, &rerr) && rerr.Retryable()
		if !retry || ctx.Err() != nil {
			return nil, err
		}
		a.emit(AgentEvent{Type: EventError, Err: err})
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(jitter(wait)):
		}
		wait = min(wait*2, a.opts.RetryMax)
	}
}

// jitter spreads d by ±10 %, so a fleet started together does not beat in step.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// run heartbeats until ctx ends, then drains and deregisters.
func (a *Agent) run(ctx context.Context) {
	defer close(a.done)
	reconnects := a.c.nc.Stats().Reconnects
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	next := time.NewTimer(jitter(a.interval()))
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			a.stop()
			return
		case <-poll.C:
			if n := a.c.nc.Stats().Reconnects; n != reconnects {
				reconnects = n
				a.reregister(ctx, "reconnect")
			}
			continue
		case <-next.C:
		}
		a.heartbeat(ctx)
		next.Reset(jitter(a.interval()))
	}
}

func (a *Agent) interval() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reg.HeartbeatIntervalMs <= 0 {
		return 30 * time.Second // the protocol's default, should a reply ever lack it
	}
	return time.Duration(a.reg.HeartbeatIntervalMs) * time.Millisecond
}

func (a *Agent) heartbeat(ctx context.Context) {
	n := int(a.active.Load())
	_, err := a.c.Heartbeat(ctx, a.spec.AgentType, a.InstanceID(), HeartbeatRequest{ActiveTasks: &n})
	if err == nil {
		return
	}
	var rerr *Error
	if errors.As(err, &rerr) && rerr.Code == CodeUnknownInstance {
		a.reregister(ctx, CodeUnknownInstance)
		return
	}
	if ctx.Err() == nil {
		a.emit(AgentEvent{Type: EventHeartbeatFailed, Err: err})
	}
}

// reregister registers the same instance again; a failure is retried at the next heartbeat,
// which is answered unknown_instance until a registration succeeds.
func (a *Agent) reregister(ctx context.Context, reason string) {
	reply, err := a.register(ctx, a.InstanceID())
	if err != nil {
		if ctx.Err() == nil {
			a.emit(AgentEvent{Type: EventError, Reason: reason, Err: err})
		}
		return
	}
	a.mu.Lock()
	a.reg = *reply
	a.mu.Unlock()
	a.emit(AgentEvent{Type: EventReregistered, Reason: reason, Registration: reply})
}

// stop reports draining, stops taking tasks, waits for those in flight (up to the drain
// timeout), and deregisters.
func (a *Agent) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), a.c.timeout)
	defer cancel()
	n := int(a.active.Load())
	_, _ = a.c.Heartbeat(ctx, a.spec.AgentType, a.InstanceID(), HeartbeatRequest{Status: StatusDraining, ActiveTasks: &n})
	closed := a.sub.StatusChanged(nats.SubscriptionClosed)
	_ = a.sub.Drain()
	deadline := time.NewTimer(a.opts.DrainTimeout)
	defer deadline.Stop()
	// Drain delivers the tasks already received, then closes the subscription.
	select {
	case <-closed:
	case <-deadline.C:
		_ = a.sub.Unsubscribe()
		a.stopTask() // tasks still running are told to give up
	}
	finished := make(chan struct{})
	go func() {
		a.tasks.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-deadline.C:
		a.stopTask()
		<-finished
	}
	a.stopTask()
	dctx, dcancel := context.WithTimeout(context.Background(), a.c.timeout)
	defer dcancel()
	_, err := a.c.Deregister(dctx, a.spec.AgentType, a.InstanceID(), "graceful")
	a.err = err
	if err == nil {
		a.emit(AgentEvent{Type: EventDeregistered})
	} else {
		var rerr *Error
		if errors.As(err, &rerr) && rerr.Code == CodeUnknownInstance {
			a.err = nil // already gone: the goal of a deregistration
		} else {
			a.emit(AgentEvent{Type: EventError, Err: err})
		}
	}
}
