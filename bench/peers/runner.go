package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Driver is one system under test doing the job: instances that register, renew their
// liveness, and are announced to a watcher when they come and when they are removed. Both
// drivers are run by the same Runner, so the pacing, timing and counting are one code.
type Driver interface {
	// Register creates instance i and returns once the system acknowledged it.
	Register(ctx context.Context, i int) error
	// Renew sends one renewal of instance i and returns at once; the driver reports the
	// answer through the Answered function it was made with. Only the pacing loop calls it.
	Renew(i int) error
	// Watch delivers every registration and every removal the system announces, as a
	// watcher of the fleet sees them, until ctx ends. It returns once the watch is in place.
	Watch(ctx context.Context, registered func(i int), removed func(i int)) error
	// FirstWave is how many instances, from 0, register before any other does: the registry
	// validates a spec once for its agent type, so a type's first instance goes alone, as a
	// fleet's first replica of a new type does.
	FirstWave() int
	Close()
}

// Answered reports the answer to a renewal of instance i: err is nil when the system
// renewed it, the reason otherwise (an unknown instance, an expired lease, a failed stream).
type Answered func(i int, err error)

// Plan is one step of the ramp: its size and timings.
type Plan struct {
	N             int
	Interval      time.Duration // each instance renews once per interval, in its own slot
	Missed        int           // a system removes an instance after this many missed intervals
	Warmup        time.Duration // after the last registration, before the window opens
	Hold          time.Duration // the measured window
	StopEvery     int           // every StopEvery-th instance stops when registration is done
	Concurrency   int           // registrations in flight at once
	EndGrace      time.Duration // when the step ends, renewals in flight get this long to be answered
	RemovalGrace  time.Duration // waited past the last stopped instance's deadline
	RegisterLimit time.Duration // registration taking longer than this fails the step
}

// tick is how often the pacing loop sends the renewals whose slots passed (as fleet.ts).
const tick = 5 * time.Millisecond

// Runner runs one Plan against one Driver. Instance i owns slot i/N of every interval, so
// renewals flow at a flat N/interval a second, and an instance registered after its slot in
// the first interval renews in the next one: always within one interval of registering.
type Runner struct {
	plan  Plan
	drv   Driver
	epoch time.Time
	out   *Output

	registerSent []atomic.Int64 // ns since epoch; 0 = not yet
	alive        []atomic.Int64 // ns since epoch of registration or last renewal sent; 0 = not registered
	pending      []atomic.Int64 // ns since epoch a renewal was sent and is not answered; 0 = none
	stopped      []atomic.Bool
	seenPut      []atomic.Bool
	removed      []atomic.Bool

	sent, answered, failed, lost atomic.Int64
	firstFailure                 atomic.Value

	mu           sync.Mutex
	windowFrom   int64 // ns since epoch; renewals sent from then until windowTo are timed
	windowTo     int64
	renewMs      []float64
	registerMs   []float64
	watchMs      []float64
	removalMs    []float64
	latenessMs   []float64
	falseRemoved int
	stoppedAt    int64
	stoppedCount int
}

func NewRunner(plan Plan, out *Output) *Runner {
	n := plan.N
	return &Runner{
		plan:         plan,
		out:          out,
		registerSent: make([]atomic.Int64, n),
		alive:        make([]atomic.Int64, n),
		pending:      make([]atomic.Int64, n),
		stopped:      make([]atomic.Bool, n),
		seenPut:      make([]atomic.Bool, n),
		removed:      make([]atomic.Bool, n),
		windowFrom:   -1,
		windowTo:     -1,
	}
}

func (r *Runner) now() int64 { return int64(time.Since(r.epoch)) }

// Answer is the Answered function a driver is made with.
func (r *Runner) Answer(i int, err error) {
	t0 := r.pending[i].Swap(0)
	if t0 == 0 {
		return // answered after it was counted lost
	}
	r.answered.Add(1)
	if err != nil {
		r.fail(err)
	}
	r.mu.Lock()
	if t0 >= r.windowFrom && (r.windowTo < 0 || t0 < r.windowTo) && r.windowFrom >= 0 {
		r.renewMs = append(r.renewMs, ms(r.now()-t0))
	}
	r.mu.Unlock()
}

func (r *Runner) fail(err error) {
	r.failed.Add(1)
	r.firstFailure.CompareAndSwap(nil, err.Error())
}

func (r *Runner) onRegistered(i int) {
	if i < 0 || i >= r.plan.N || r.seenPut[i].Swap(true) {
		return
	}
	sent := r.registerSent[i].Load()
	if sent == 0 {
		return
	}
	r.mu.Lock()
	r.watchMs = append(r.watchMs, ms(r.now()-sent))
	r.mu.Unlock()
}

func (r *Runner) onRemoved(i int) {
	if i < 0 || i >= r.plan.N || r.removed[i].Swap(true) {
		return
	}
	at := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped[i].Load() {
		r.falseRemoved++
		return
	}
	deadline := r.alive[i].Load() + int64(r.plan.Missed)*int64(r.plan.Interval)
	r.removalMs = append(r.removalMs, ms(at-r.stoppedAt))
	r.latenessMs = append(r.latenessMs, ms(at-deadline))
}

// pace sends the renewals whose slots passed until ctx ends.
func (r *Runner) pace(ctx context.Context) {
	n := int64(r.plan.N)
	slot := int64(0)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		due := int64(float64(time.Since(r.epoch)) / float64(r.plan.Interval) * float64(n))
		for ; slot < due; slot++ {
			i := int(slot % n)
			if r.alive[i].Load() != 0 && !r.stopped[i].Load() {
				r.renew(i)
			}
		}
	}
}

func (r *Runner) renew(i int) {
	now := r.now()
	// A renewal still unanswered one interval later failed: the previous one is counted lost.
	if r.pending[i].Swap(now) != 0 {
		r.lost.Add(1)
		r.firstFailure.CompareAndSwap(nil, "a renewal unanswered for a whole interval")
	}
	r.alive[i].Store(now)
	r.sent.Add(1)
	if err := r.drv.Renew(i); err != nil {
		if r.pending[i].Swap(0) != 0 {
			r.answered.Add(1)
			r.fail(err)
		}
	}
}

// register registers every instance, Concurrency at a time, in index order: the driver's
// first wave, then the rest.
func (r *Runner) register(ctx context.Context) (errors int, first string) {
	wave := min(r.drv.FirstWave(), r.plan.N)
	e1, f1 := r.registerRange(ctx, 0, wave)
	e2, f2 := r.registerRange(ctx, wave, r.plan.N)
	if f1 == "" {
		f1 = f2
	}
	return e1 + e2, f1
}

func (r *Runner) registerRange(ctx context.Context, from, to int) (errors int, first string) {
	var next atomic.Int64
	next.Store(int64(from))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < r.plan.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < to && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				t0 := r.now()
				r.registerSent[i].Store(t0)
				err := r.drv.Register(ctx, i)
				t1 := r.now()
				mu.Lock()
				r.registerMs = append(r.registerMs, ms(t1-t0))
				if err != nil {
					errors++
					if first == "" {
						first = err.Error()
					}
				}
				mu.Unlock()
				// Its liveness counts from when it was sent, as a renewal's does: the deadline
				// is never later than the system's own.
				if err == nil {
					r.alive[i].Store(t0)
				}
			}
		}()
	}
	wg.Wait()
	return errors, first
}

// Run does the job once: watch, register all while renewing, stop every StopEvery-th
// instance, measure a window, wait for the stopped instances' removal, and report.
func (r *Runner) Run(ctx context.Context, drv Driver) (*Result, error) {
	r.drv = drv
	r.epoch = time.Now()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := drv.Watch(watchCtx, r.onRegistered, r.onRemoved); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	paceCtx, stopPace := context.WithCancel(ctx)
	defer stopPace()
	go r.pace(paceCtx)

	r.out.Event("registering", map[string]any{"n": r.plan.N})
	regCtx, cancelReg := context.WithTimeout(ctx, r.plan.RegisterLimit)
	regErrors, regFirst := r.register(regCtx)
	regTimedOut := regCtx.Err() != nil
	cancelReg()
	regSeconds := time.Since(r.epoch).Seconds()
	r.out.Event("registered", map[string]any{"seconds": round(regSeconds, 1), "errors": regErrors, "first_error": regFirst})

	// The stopped instances go silent now, as crashed agents do; their removal overlaps the window.
	r.mu.Lock()
	r.stoppedAt = r.now()
	for i := 0; i < r.plan.N; i += r.plan.StopEvery {
		if r.alive[i].Load() != 0 {
			r.stopped[i].Store(true)
			r.stoppedCount++
		}
	}
	stoppedAt := r.stoppedAt
	r.mu.Unlock()

	sleep(ctx, r.plan.Warmup)
	sentBefore := r.sent.Load()
	r.mu.Lock()
	r.windowFrom = r.now()
	r.mu.Unlock()
	r.out.Event("window_open", nil)
	sleep(ctx, r.plan.Hold)
	r.mu.Lock()
	r.windowTo = r.now()
	windowSeconds := float64(r.windowTo-r.windowFrom) / 1e9
	r.mu.Unlock()
	windowSent := r.sent.Load() - sentBefore
	r.out.Event("window_close", map[string]any{"renewals": windowSent, "seconds": round(windowSeconds, 3)})

	// Every stopped instance's deadline is at most Missed intervals after it stopped.
	removalDeadline := time.Duration(stoppedAt) + time.Duration(r.plan.Missed)*r.plan.Interval + r.plan.RemovalGrace
	for time.Since(r.epoch) < removalDeadline && ctx.Err() == nil {
		r.mu.Lock()
		done := len(r.removalMs) >= r.stoppedCount
		r.mu.Unlock()
		if done {
			break
		}
		sleep(ctx, 100*time.Millisecond)
	}
	stopPace()
	// Renewals in flight get EndGrace to be answered; those sent earlier and still unanswered failed.
	sleep(ctx, r.plan.EndGrace)
	unanswered := int64(0)
	now := r.now()
	for i := range r.pending {
		if t0 := r.pending[i].Load(); t0 != 0 && now-t0 >= int64(r.plan.EndGrace) {
			unanswered++
		}
	}
	stopWatch()

	r.mu.Lock()
	defer r.mu.Unlock()
	first, _ := r.firstFailure.Load().(string)
	res := &Result{
		N:                  r.plan.N,
		IntervalSeconds:    r.plan.Interval.Seconds(),
		RegisterSeconds:    round(regSeconds, 1),
		RegisterErrors:     regErrors,
		RegisterTimedOut:   regTimedOut,
		RegisterFirstError: regFirst,
		RegisterMs:         summarize(r.registerMs),
		WatchMs:            summarize(r.watchMs),
		RegistrationsSeen:  len(r.watchMs),
		WindowSeconds:      round(windowSeconds, 3),
		WindowRenewals:     windowSent,
		WindowRate:         round(float64(windowSent)/windowSeconds, 1),
		RenewMs:            summarize(r.renewMs),
		Sent:               r.sent.Load(),
		Answered:           r.answered.Load(),
		Failed:             r.failed.Load(),
		Lost:               r.lost.Load() + unanswered,
		FirstFailure:       first,
		Stopped:            r.stoppedCount,
		StoppedRemoved:     len(r.removalMs),
		FalseRemovals:      r.falseRemoved,
		RemovalMs:          summarize(r.removalMs),
		LatenessMs:         summarize(r.latenessMs),
	}
	res.AllRenewed = !regTimedOut && regErrors == 0 && res.Failed == 0 && res.Lost == 0 && res.Sent > 0
	return res, nil
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
