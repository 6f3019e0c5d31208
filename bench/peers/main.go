// Command peers is the load generator of the peers benchmark (bench/scenarios/peers.ts): one
// step of the ramp, N instances kept alive against one system, etcd or the registry. Both
// drivers share the runner (pacing, timing, counting), so the two systems see the same load.
//
//	peers -system etcd -endpoint http://127.0.0.1:2379 -n 10000
//	peers -system registry -endpoint nats://127.0.0.1:4222 -n 10000
//
// It prints JSON lines on stdout: events, then one "result" line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	system := flag.String("system", "", "etcd or registry")
	endpoint := flag.String("endpoint", "", "etcd client URL or NATS URL")
	prefix := flag.String("prefix", "registry", "the registry's subject prefix")
	n := flag.Int("n", 10_000, "instances")
	interval := flag.Duration("interval", 30*time.Second, "each instance renews once per interval")
	missed := flag.Int("missed", 3, "an instance is removed after this many missed intervals (the registry's eviction rule; etcd's lease TTL)")
	warmup := flag.Duration("warmup", 5*time.Second, "after registration, before the measured window")
	hold := flag.Duration("hold", 30*time.Second, "the measured window")
	stopEvery := flag.Int("stop-every", 100, "every n-th instance stops once registered")
	concurrency := flag.Int("concurrency", 256, "registrations in flight")
	streams := flag.Int("etcd-streams", 16, "etcd keepalive streams")
	endGrace := flag.Duration("end-grace", 2*time.Second, "when the step ends, renewals in flight get this long to be answered (before, one unanswered by its next slot failed)")
	grace := flag.Duration("removal-grace", 30*time.Second, "waited for removals past the last deadline")
	registerLimit := flag.Duration("register-limit", 20*time.Minute, "the registration phase fails past this")
	flag.Parse()

	plan := Plan{N: *n, Interval: *interval, Missed: *missed, Warmup: *warmup, Hold: *hold, StopEvery: *stopEvery, Concurrency: *concurrency, EndGrace: *endGrace, RemovalGrace: *grace, RegisterLimit: *registerLimit}
	out := &Output{start: time.Now()}
	runner := NewRunner(plan, out)
	var drv Driver
	var err error
	switch *system {
	case "etcd":
		drv, err = NewEtcdDriver(*endpoint, *n, time.Duration(*missed)*(*interval), *streams, runner.Answer)
	case "registry":
		drv, err = NewRegistryDriver(*endpoint, *prefix, *n, interval.Milliseconds(), runner.Answer)
	default:
		err = fmt.Errorf("-system must be etcd or registry, not %q", *system)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
	defer drv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	res, err := runner.Run(ctx, drv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
	res.System = *system
	out.Event("result", map[string]any{"result": res})
}
