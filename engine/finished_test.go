package engine

import (
	"context"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// stopReader reads, when the run tells its observers it stopped (for /metrics, the moment
// mcpchaos_run_finished turns 1), the counter a scrape would read then.
type stopReader struct{ atStop int64 }

func (*stopReader) Start(*View) error { return nil }
func (s *stopReader) Stop(v *View, _ time.Time) {
	for _, r := range v.Recorders() {
		s.atStop += r.Get(metrics.CallsRunTwice)
	}
}

// Once the observers are told the run stopped, every counter is final: calls_run_twice, which
// the reference server is asked for after the clients stop, included. (It used to be counted
// after the observers' Stop, so a scrape at that moment read "finished" with 0.)
func TestObserversStopWithFinalCounters(t *testing.T) {
	w, err := workloads.Parse("twice.yaml", []byte(`name: twice
target: {builtin: {session_ttl: 1m}}
phases:
  - {name: calls, duration: 2500ms, calls: true}
groups:
  - {name: naive, clients: 4, policy: naive, tool: slow, call_every: 100ms, retries: 6, retry_backoff: 150ms}
faults:
  - {name: out, toxic: down, at: 800ms, for: 300ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(w)
	if err != nil {
		t.Fatal(err)
	}
	obs := &stopReader{}
	exp, err := Run(context.Background(), plan, WithStderr(testWriter{t}), WithObserver(obs))
	if exp == nil {
		t.Fatalf("no export: %v", err)
	}
	final := group(t, exp, "naive").Counters["calls_run_twice"]
	if final == 0 {
		t.Fatalf("calls_run_twice = 0, though an outage cut slow calls in flight and they were retried: %v", group(t, exp, "naive").Counters)
	}
	if obs.atStop != final {
		t.Errorf("at the observers' Stop calls_run_twice read %d, the export says %d: /metrics said finished before the count was final", obs.atStop, final)
	}
}
