package results

import (
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// sample builds a two-group export from recorders fed with seeded random numbers: counters
// scaled by scale, latencies spread over 100 µs .. 200 ms.
func sample(t testing.TB, seed uint64, scale int64) *Export {
	t.Helper()
	return sampleSlower(t, seed, scale, 1)
}

// sampleSlower is sample with every latency multiplied by slower.
func sampleSlower(t testing.TB, seed uint64, scale int64, slower float64) *Export {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var snaps []*metrics.Snapshot
	for _, g := range []struct{ name, policy string }{{"naive", "naive"}, {"probe", "probe"}} {
		rec := metrics.NewRecorder(g.name, g.policy, 25)
		for _, c := range metrics.Counters() {
			rec.Add(c, scale*int64(1+rng.IntN(20)))
		}
		rec.Error(metrics.ErrReset)
		rec.AddFalseHealthy(time.Duration(scale) * 1500 * time.Millisecond)
		for _, h := range metrics.Hists() {
			for i := range 200 {
				rec.Record(h, i, time.Duration(float64(100+rng.IntN(200_000))*slower)*time.Microsecond)
			}
		}
		snaps = append(snaps, rec.Snapshot())
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := Build(Run{
		Tool: "mcpchaos", ToolVersion: "test", Workload: "w", WorkloadSource: "w.yaml",
		WorkloadHash: "sha256:abc", Target: "builtin", Start: start, End: start.Add(10 * time.Second),
		PlannedSeconds: 10,
	}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// roundTrip writes e as JSON and reads it back, as every consumer of a file sees it.
func roundTrip(t testing.TB, e *Export) *Export {
	t.Helper()
	p := t.TempDir() + "/e.json"
	if err := WriteFile(p, e); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// newForeign is a histogram of another tool's geometry (1 µs .. 1 h at 2 digits).
func newForeign() *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 3600*1000*1000, 2)
	h.RecordValue(1234)
	return h
}
