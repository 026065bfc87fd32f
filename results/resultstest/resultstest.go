// Package resultstest builds exports for the tests of results and the packages that read
// exports (compare, merge, report): seeded, so a test's numbers are the same every run.
package resultstest

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
)

// Sample builds a two-group export from recorders fed with seeded random numbers: counters
// scaled by scale, latencies spread over 100 µs .. 200 ms.
func Sample(t testing.TB, seed uint64, scale int64) *results.Export {
	t.Helper()
	return SampleSlower(t, seed, scale, 1)
}

// SampleSlower is Sample with every latency multiplied by slower.
func SampleSlower(t testing.TB, seed uint64, scale int64, slower float64) *results.Export {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var snaps []*metrics.Snapshot
	for _, g := range []struct{ name, policy string }{{"naive", "naive"}, {"probe", "probe"}} {
		rec := metrics.NewRecorder(g.name, g.policy, 25)
		for _, c := range metrics.Counters() {
			rng := drawFor(rng, seed, g.name, c.String())
			rec.Add(c, scale*int64(1+rng.IntN(20)))
		}
		rec.Error(metrics.ErrReset)
		rec.AddFalseHealthy(time.Duration(scale) * 1500 * time.Millisecond)
		for _, h := range metrics.Hists() {
			if h == metrics.SessionLife {
				continue // no session died: the tests of session_life give it their own lives
			}
			rng := drawFor(rng, seed, g.name, h.String())
			for i := range 200 {
				rec.Record(h, i, time.Duration(float64(100+rng.IntN(200_000))*slower)*time.Microsecond)
			}
		}
		snaps = append(snaps, rec.Snapshot())
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := results.Build(results.Run{
		Tool: "mcpchaos", ToolVersion: "test", Workload: "w", WorkloadSource: "w.yaml",
		WorkloadHash: "sha256:abc", Target: "builtin", Start: start, End: start.Add(10 * time.Second),
		PlannedSeconds: 10,
	}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// addedLater are metrics added to the catalog after the tests built on Sample were written for
// its numbers (compare's verdicts on seeded draws): each draws from numbers of its own
// (drawFor), so that every other metric's sample stays what it was.
var addedLater = map[string]bool{"reconnects_refused": true, "refusal_duration": true, "live_sessions_declared_dead": true}

// drawFor is the numbers metric of group draws from: the sample's shared sequence, or, for a
// metric added later, its own.
func drawFor(shared *rand.Rand, seed uint64, group, metric string) *rand.Rand {
	if !addedLater[metric] {
		return shared
	}
	h := fnv.New64a()
	h.Write([]byte(group + "/" + metric))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// RoundTrip writes e as JSON and reads it back, as every consumer of a file sees it.
func RoundTrip(t testing.TB, e *results.Export) *results.Export {
	t.Helper()
	p := t.TempDir() + "/e.json"
	if err := results.WriteFile(p, e); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// NewForeign is a histogram of another tool's geometry (1 µs .. 1 h at 2 digits).
func NewForeign() *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 3600*1000*1000, 2)
	h.RecordValue(1234)
	return h
}

func f(v float64) *float64 { return &v }

// WithSteady gives e a steady_state section: healthz passed, held failed once (if fail), and
// a rollback.
func WithSteady(e *results.Export, fail bool) *results.Export {
	held := results.SteadyProbe{Name: "held", Kind: "promql", When: []string{"before", "after"}, Tolerance: "value <= 5",
		Runs: []results.ProbeRun{{When: "before", AtS: -0.2, TookS: 0.01, Value: f(3), Detail: "value 3", Pass: true}}}
	after := results.ProbeRun{When: "after", AtS: 10.1, TookS: 0.01, Value: f(4), Detail: "value 4", Pass: true}
	if fail {
		after.Value, after.Detail, after.Pass, after.Why = f(9), "value 9", false, "outside the tolerance value <= 5: 9 is not <= 5"
	}
	held.Runs = append(held.Runs, after)
	e.SteadyState = &results.SteadyState{Title: "no leak", Probes: []results.SteadyProbe{
		{Name: "healthz", Kind: "http", When: []string{"continuously"}, Runs: []results.ProbeRun{{When: "continuously", AtS: 1, Value: f(200), Detail: "status 200", Pass: true}}},
		held,
		{Name: "during-cut", Kind: "command", When: []string{"during"}, During: "cut", Runs: []results.ProbeRun{}},
	}}
	e.SteadyState.Judge()
	e.Rollbacks = []results.ActionAt{{Action: "undo", Kind: "exec", StartedAtS: 10.2, EndedAtS: 10.3, Detail: "sh exited 0"}}
	return e
}
