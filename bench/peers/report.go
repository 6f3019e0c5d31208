package main

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"sync"
	"time"
)

// Output prints one JSON object a line on stdout: progress events the scenario acts on (it
// starts and reads its CPU meters on window_open and window_close) and the step's result.
type Output struct {
	mu    sync.Mutex
	start time.Time
}

func (o *Output) Event(name string, fields map[string]any) {
	line := map[string]any{"event": name, "t": round(time.Since(o.start).Seconds(), 3)}
	for k, v := range fields {
		line[k] = v
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	b, _ := json.Marshal(line)
	os.Stdout.Write(append(b, '\n'))
}

// Summary of latency samples in milliseconds, nearest-rank percentiles (as bench/lib/stats.ts).
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	pick := func(q float64) float64 {
		k := int(math.Ceil(q*float64(len(sorted)))) - 1
		return round(sorted[max(0, min(len(sorted)-1, k))], 2)
	}
	return Summary{Count: len(sorted), P50: pick(0.5), P99: pick(0.99), Max: round(sorted[len(sorted)-1], 2)}
}

// Result is one step's figures for one system, the "result" line's body.
type Result struct {
	System             string  `json:"system"`
	N                  int     `json:"n"`
	IntervalSeconds    float64 `json:"interval_s"`
	RegisterSeconds    float64 `json:"register_s"`
	RegisterErrors     int     `json:"register_errors"`
	RegisterTimedOut   bool    `json:"register_timed_out"`
	RegisterFirstError string  `json:"register_first_error,omitempty"`
	RegisterMs         Summary `json:"register_ms"`
	// From sending a registration to the watcher seeing it.
	WatchMs           Summary `json:"watch_ms"`
	RegistrationsSeen int     `json:"registrations_seen"`
	WindowSeconds     float64 `json:"window_s"`
	WindowRenewals    int64   `json:"window_renewals"`
	WindowRate        float64 `json:"window_rate"`
	// Renewals sent in the window, from send to answer.
	RenewMs      Summary `json:"renew_ms"`
	Sent         int64   `json:"sent"`
	Answered     int64   `json:"answered"`
	Failed       int64   `json:"failed"`
	Lost         int64   `json:"lost"`
	FirstFailure string  `json:"first_failure,omitempty"`
	AllRenewed   bool    `json:"all_renewed"`
	Stopped      int     `json:"stopped"`
	// Stopped instances the watcher saw removed, and live ones it saw removed.
	StoppedRemoved int `json:"stopped_removed"`
	FalseRemovals  int `json:"false_removals"`
	// From the instance stopping to the watcher seeing its removal; lateness past
	// its deadline (last renewal or registration + Missed intervals).
	RemovalMs  Summary `json:"removal_ms"`
	LatenessMs Summary `json:"lateness_ms"`
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
