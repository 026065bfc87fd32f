// This file is over 400 lines: it holds merge's tests with their shared shard fixtures
// (shards, fullShards), which are easier to trust in one place.
package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

// shards records random samples into n shard recorders per group and into one whole-run
// recorder per group holding every sample, and returns the shards' exports (read back from
// files) and the whole run's.
func shards(t testing.TB, n, samples int) ([]results.Part, *results.Export) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	groups := []string{"naive", "probe"}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := results.Run{Tool: "mcpchaos", ToolVersion: "test", Workload: "w", WorkloadHash: "sha256:abc", Target: "builtin",
		Start: start, End: start.Add(10 * time.Second), PlannedSeconds: 10}
	whole := make([]*metrics.Recorder, len(groups))
	for i, g := range groups {
		whole[i] = metrics.NewRecorder(g, g, 0)
	}
	var parts []results.Part
	for s := range n {
		var snaps []*metrics.Snapshot
		for gi, g := range groups {
			rec := metrics.NewRecorder(g, g, 10+s)
			whole[gi].Clients += 10 + s
			for _, c := range metrics.Counters() {
				k := int64(rng.IntN(1000))
				rec.Add(c, k)
				whole[gi].Add(c, k)
			}
			for _, h := range metrics.Hists() {
				for i := range samples + samples/5*s {
					// a long tail: most fast, a few very slow
					d := time.Duration(50+rng.ExpFloat64()*2000) * time.Microsecond
					if rng.IntN(100) == 0 {
						d *= 500
					}
					rec.Record(h, i, d)
					whole[gi].Record(h, i, d)
				}
			}
			rec.AddFalseHealthy(time.Second)
			whole[gi].AddFalseHealthy(time.Second)
			snaps = append(snaps, rec.Snapshot())
		}
		r := run
		r.Shard = &results.Shard{Index: s, Count: n}
		r.Generation, r.OtherGeneration = "session", "stateless"
		r.Notes = []string{"the same note from every shard"}
		r.Findings = []string{"errors.protocol: a replayed event with no data"}
		r.NotObservable = map[string][]string{"probe": {"stale_events_applied"}}
		r.Libraries = map[string]results.Library{"probe": {Kind: "ts-sdk", Name: "@modelcontextprotocol/sdk", Version: "1.32.2",
			Options: map[string]any{"maxRetries": 10}, NegotiatedProtocol: "2025-11-25", ErrorClasses: map[string]int64{"McpError(-32001)": 1}}}
		r.Withhold("naive", results.EstimateRefuted, "false_healthy_seconds")
		r.Start = start.Add(time.Duration(s) * 300 * time.Millisecond) // clocks a little apart
		r.Labels = map[string]string{"release": "v1.4.2"}
		r.End = r.Start.Add(10 * time.Second)
		e, err := results.Build(r, snaps)
		if err != nil {
			t.Fatal(err)
		}
		e.Faults = []results.FaultAt{{Fault: "down", Proxy: "mcpchaos-naive", AddedAtS: 1, RemovedAtS: 2}}
		e.Phases = []results.PhaseAt{{Phase: "active", StartS: 0, EndS: 4, Turns: map[string]int64{"probe": 10}, CallsNotMade: map[string]int64{"probe": 1}, CallsNotStarted: map[string]int64{"probe": 1}}, {Phase: "quiet", StartS: 4, EndS: 10}}
		e.Thresholds = []results.ThresholdResult{{Expr: "overall.drops < 1", Unit: gate.UnitCount, Actual: "x"}}
		e.Timeline = &results.Timeline{IntervalS: 1}
		for k := range 11 {
			e.Timeline.Samples = append(e.Timeline.Samples, results.Sample{TS: float64(k), Groups: map[string]results.GroupSample{
				"naive": {States: map[string]int64{"live": 10}, Counters: map[string]int64{"drops": int64(k)}},
			}})
		}
		parts = append(parts, results.Part{File: "shard-" + string(rune('0'+s)) + ".json", Export: resultstest.RoundTrip(t, e)})
	}
	var snaps []*metrics.Snapshot
	for _, w := range whole {
		snaps = append(snaps, w.Snapshot())
	}
	e, err := results.Build(run, snaps)
	if err != nil {
		t.Fatal(err)
	}
	return parts, e
}

// The check: merged counts are the sums, merged percentiles are those of one histogram
// holding all samples.
func TestMergeIsExact(t *testing.T) {
	parts, whole := shards(t, 3, 500)
	m, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m = resultstest.RoundTrip(t, m)
	for _, g := range m.AllGroups() {
		w := whole.Group(g.Name)
		if g.Clients != w.Clients {
			t.Errorf("%s: clients %d, want %d", g.Name, g.Clients, w.Clients)
		}
		for k, v := range w.Counters {
			if g.Counters[k] != v {
				t.Errorf("%s: %s = %d, want the sum %d", g.Name, k, g.Counters[k], v)
			}
		}
		if g.RetryAmplification != w.RetryAmplification || g.FalseHealthySeconds != w.FalseHealthySeconds {
			t.Errorf("%s: amplification %v/%v, false healthy %v/%v", g.Name, g.RetryAmplification, w.RetryAmplification, g.FalseHealthySeconds, w.FalseHealthySeconds)
		}
		for name, wh := range w.Histograms {
			// Their fields as written to the file (the decoded histogram is compared below).
			gj, _ := json.Marshal(g.Histograms[name])
			wj, _ := json.Marshal(wh)
			if gh := g.Histograms[name]; string(gj) != string(wj) {
				t.Errorf("%s %s: merged %+v\nwant the whole run's %+v", g.Name, name, gh, wh)
			}
			a, _ := g.Histograms[name].Decoded()
			b, _ := w.Histograms[name].Decoded()
			if !a.Equals(b) {
				t.Errorf("%s %s: merged histogram differs from the one holding every sample", g.Name, name)
			}
		}
	}
	// Averaging the shards' p99s would not have given this (the test would be toothless if it did).
	var avg int64
	for _, p := range parts {
		avg += p.Export.Groups[0].Histograms["probe_latency"].P99US
	}
	if avg/3 == m.Groups[0].Histograms["probe_latency"].P99US {
		t.Log("averaged p99 happens to equal the merged p99; pick other seeds")
	}
	if len(m.Run.MergedShards) != 3 || m.Run.Shard != nil || !m.Run.Start.Equal(parts[0].Export.Run.Start) {
		t.Errorf("run %+v", m.Run)
	}
	if n := m.Run.Libraries["probe"].ErrorClasses["McpError(-32001)"]; n != int64(len(parts)) {
		t.Errorf("merged error classes: %d, want one a shard (%d)", n, len(parts))
	}
	// The rate of background requests is the merged count over the merged run's length, not
	// a shard's rate carried over or summed.
	bg := float64(m.Group("probe").Counters["dead_session_background_requests"])
	if got, want := m.Run.Libraries["probe"].BackgroundPerSecond, bg/m.Run.End.Sub(m.Run.Start).Seconds(); bg == 0 || got != want {
		t.Errorf("merged background requests per second %v, want %v", got, want)
	}
	if p := parts[0].Export; p.Run.Libraries["probe"].BackgroundPerSecond != float64(p.Group("probe").Counters["dead_session_background_requests"])/10 {
		t.Errorf("a shard's background requests per second: %v", p.Run.Libraries["probe"])
	}
	if m.Run.Generation != "session" || len(m.Run.Notes) != 1 || len(m.Run.NotObservable["probe"]) != 1 {
		t.Errorf("run notes not carried over: %+v", m.Run)
	}
	if len(m.Faults) != 3 || *m.Faults[2].Shard != 2 || m.Faults[2].AddedAtS != 1.6 {
		t.Errorf("faults %+v", m.Faults)
	}
	if len(m.Thresholds) != 1 || m.Thresholds[0].Pass || m.Thresholds[0].Actual != gate.FormatValue(gate.UnitCount, float64(whole.Overall.Counters["drops"])) {
		t.Errorf("thresholds not judged again on the merged numbers: %+v", m.Thresholds)
	}
}

// Timelines align on wall-clock time: shard 1 started 300 ms after shard 0, shard 2 600 ms.
func TestMergeTimelines(t *testing.T) {
	parts, _ := shards(t, 3, 10)
	m, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Run.Labels["release"] != "v1.4.2" {
		t.Errorf("labels %v, want release=v1.4.2 kept", m.Run.Labels)
	}
	if len(m.Phases) != 2 || m.Phases[1].Phase != "quiet" || m.Phases[1].StartS != 4 {
		t.Errorf("phases %+v, want shard 0's (the first to start) on the merged clock", m.Phases)
	}
	tl := m.Timeline
	if tl.IntervalS != 1 {
		t.Fatalf("interval %v", tl.IntervalS)
	}
	// Slots 0..11: shard 2's samples (600 ms late) round to slots 1..11.
	if len(tl.Samples) != 12 {
		t.Fatalf("%d samples", len(tl.Samples))
	}
	at := func(k int) results.GroupSample { return tl.Samples[k].Groups["naive"] }
	if got := at(0).States["live"]; got != 20 { // shards 0 and 1; shard 2 not started
		t.Errorf("slot 0: live %d, want 20", got)
	}
	if got := at(5).States["live"]; got != 30 {
		t.Errorf("slot 5: live %d, want 30", got)
	}
	if got := at(5).Counters["drops"]; got != 5+5+4 {
		t.Errorf("slot 5: drops %d, want 14", got)
	}
	// Slot 11: only shard 2 sampled; the others have ended: their totals stay, their clients do not.
	if got := at(11); got.States["live"] != 10 || got.Counters["drops"] != 10+10+10 {
		t.Errorf("slot 11: %+v", got)
	}
}

func TestMergeRefuses(t *testing.T) {
	built, _ := shards(t, 3, 10)
	// fresh copies of the shards' run metadata, which the cases edit; groups are shared
	fresh := func() []results.Part {
		ps := make([]results.Part, len(built))
		for i, p := range built {
			e := *p.Export
			s := *e.Run.Shard
			e.Run.Shard = &s
			ps[i] = results.Part{File: p.File, Export: &e}
		}
		return ps
	}
	for _, tc := range []struct {
		name    string
		edit    func(ps []results.Part) []results.Part
		opts    Options
		want    string
		succeed bool
	}{
		{name: "different workload", edit: func(ps []results.Part) []results.Part { ps[1].Export.Run.Workload = "other"; return ps },
			want: `shard-1.json is a shard of workload "other" but shard-0.json is of "w"`},
		{name: "different file", edit: func(ps []results.Part) []results.Part { ps[2].Export.Run.WorkloadHash = "sha256:def"; return ps },
			want: "from different files"},
		{name: "duplicate", edit: func(ps []results.Part) []results.Part { ps[2].Export.Run.Shard.Index = 0; return ps },
			want: "shard 0 appears twice: shard-0.json and shard-2.json"},
		{name: "counts differ", edit: func(ps []results.Part) []results.Part { ps[1].Export.Run.Shard.Count = 4; return ps },
			want: "the shard counts differ"},
		{name: "missing", edit: func(ps []results.Part) []results.Part { return ps[:2] },
			want: "shard(s) 2 of 0..2 are missing; merge all 3 shards, or pass --allow-partial"},
		{name: "partial allowed", edit: func(ps []results.Part) []results.Part { return ps[1:] }, opts: Options{AllowPartial: true}, succeed: true},
		{name: "not a shard", edit: func(ps []results.Part) []results.Part { ps[0].Export.Run.Shard = nil; return ps },
			want: "shard-0.json is not a shard (it was run without --shard)"},
		{name: "nothing", edit: func(ps []results.Part) []results.Part { return nil }, want: "no shards to merge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.edit(fresh()), tc.opts)
			if tc.succeed {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var me *results.MismatchError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a MismatchError containing %q", err, tc.want)
			}
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	parts, _ := shards(b, 8, 500)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge(parts, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSampleInterval(t *testing.T) {
	for _, tc := range []struct{ planned, want time.Duration }{
		{10 * time.Second, 250 * time.Millisecond},
		{5 * time.Minute, time.Second},
		{1000 * time.Second, time.Second},
		{100 * time.Minute, 6 * time.Second},
		{30 * 24 * time.Hour, 2592 * time.Second},
	} {
		if got := results.SampleInterval(tc.planned); got != tc.want {
			t.Errorf("SampleInterval(%s) = %s, want %s", tc.planned, got, tc.want)
		}
	}
}

// fullShards are two shards' exports with every field of Export set somewhere, as a release-day
// run against the reference server's replicas writes them.
func fullShards(t *testing.T) []results.Part {
	t.Helper()
	parts, _ := shards(t, 2, 10)
	one := 1
	for i, p := range parts {
		e, r := p.Export, &p.Export.Run
		at := r.Start.Add(-time.Second)
		r.ID = fmt.Sprintf("0000000%d", i)
		r.WorkloadSource = "builtin:w"
		r.NegotiatedProtocol = "2025-06-18"
		r.Proxies = map[string]string{"naive": fmt.Sprintf("127.0.0.1:2000%d", i)}
		r.Labels["commit"] = fmt.Sprintf("abc%d", i)
		r.Shard.StartAt, r.Shard.LateS = &at, 0.5
		r.Interrupted, r.Aborted = i == 1, map[bool]string{true: "overall.drops < 1 failed"}[i == 1]
		r.DetectionDelayEstimated, r.Error = i == 0, map[bool]string{true: "a shard's error"}[i == 0]
		e.Faults[0].Error = map[bool]string{true: "toxiproxy refused"}[i == 1]
		r.SessionLeak = &results.SessionLeak{Judged: true, Pass: true, Held: 3, Live: 3, AtSeconds: 9, TTLSeconds: 2,
			Opened: 20, Deleted: 4, Expired: 13, Refused: 1, Verdict: "passed"}
		e.Thresholds = append(e.Thresholds,
			results.ThresholdResult{Expr: "overall.sessions_started > 0", AbortOnFail: true, AbortedRun: i == 1, Unit: gate.UnitCount},
			results.ThresholdResult{Expr: "nosuch.drops < 1", Unit: gate.UnitCount})
		e.Timeline.Samples[3].Groups["naive"] = results.GroupSample{States: map[string]int64{"live": 10}, Errors: map[string]int64{"http_404": 1}}
		for j := range e.Groups { // transport errors, some of them in the starved window below (results/causes.go)
			e.Groups[j].Errors = map[string]int64{"connect": 7, "timeout": 50}
			e.Groups[j].SessionTTL = results.DeclaredTTL(2*time.Second, "")
		}
		e.Overall.SessionTTL = results.DeclaredTTL(2*time.Second, "")
		e.Overall.Errors = map[string]int64{"connect": 14, "timeout": 100}
		for _, g := range e.AllGroups() { // a call that began 2 s after its turn, and 3 errors of the tool's own limits
			h, err := g.Histograms["turn_lag"].Decoded()
			if err != nil {
				t.Fatal(err)
			}
			h = hdrhistogram.Import(h.Export())
			_ = h.RecordValues(2_000_000, map[bool]int64{true: 2, false: 1}[g == &e.Overall])
			if g.Histograms["turn_lag"], err = results.HistogramOf(h); err != nil {
				t.Fatal(err)
			}
			g.Counters["errors_own_limits"] = map[bool]int64{true: 6, false: 3}[g == &e.Overall]
		}
		e.Timeline.Samples[7].Groups["probe"] = results.GroupSample{Errors: map[string]int64{"timeout": 4}, Counters: map[string]int64{"calls_skipped": 3}} // in the starved window, after the fault
		e.Actions = []results.ActionAt{
			{Action: "deploy", Kind: "restart", StartedAtS: 2, EndedAtS: 3, Detail: "replica 1 of 2"},
			{Action: "script", Kind: "exec", StartedAtS: 1 + float64(i), EndedAtS: 4, Command: []string{"./deploy.sh"},
				ExitStatus: &one, Output: "deploying", OutputTruncated: true, Error: "exit status 1"},
		}
		e.Topology = &results.Topology{Replicas: 2, Routing: "session", EventLog: "shared", LogErrors: int64(i + 1), Deaths: []results.DeathsBy{
			{Cause: "restart", Fault: "deploy", Replica: 1, Sessions: 5 + i},
			{Cause: "ttl", Replica: 0, Sessions: 2},
		}}
		if i == 0 { // shard 0 runs the steady state and the rollbacks
			e.SteadyState, e.Rollbacks = resultstest.WithSteady(e, true).SteadyState, resultstest.WithSteady(e, true).Rollbacks
			e.SteadyState.Probes[0].Skipped = []results.ProbeSkip{{When: "after", Why: "the run was interrupted"}}
			e.SteadyState.Probes[0].OmittedRuns, e.SteadyState.Probes[0].OmittedFailures = 5, 1 // past the runs an export keeps
			e.Rollbacks[0].Command, e.Rollbacks[0].ExitStatus, e.Rollbacks[0].Output, e.Rollbacks[0].OutputTruncated, e.Rollbacks[0].Error = []string{"sh"}, &one, "x", true, "exit 1"
		}
		wait, waitS := 0.2, 0.25
		e.Generator = &generator.Report{Seconds: 10, CPUs: 2, CPUSeconds: 1, CPUShare: 0.05, CPUWaitShare: &wait, CPUWaitS: &waitS, Machine: "m1",
			TimerLag: generator.Dist{Count: 9, P50US: 1, P99US: 2, MaxUS: 3}, SchedLatency: generator.Dist{Count: 9, P50US: 1, P99US: 2, MaxUS: 3},
			TurnLag: generator.Dist{Count: 9, P50US: 1, P99US: 2, MaxUS: 3}, DispatchLag: generator.Dist{Count: 9, P50US: 1, P99US: 2, MaxUS: 3}, GCPauses: generator.GCPauses{Count: 1, TotalUS: 5, MaxUS: 5},
			Windows: 10, Starved: i == 1, StarvedS: 2, Starving: []generator.Window{{FromS: 6, ToS: 8, Why: "timer lag"}}, Bound: generator.Bound.Describe()}
		parts[i].Export = resultstest.RoundTrip(t, e)
	}
	return parts
}

// zeroFields walks v and returns the fields (paths like "Actions[].Shard") that are zero
// everywhere in it: a field merge forgot, or one the fixture above does not set yet. A slice
// or map counts as set when it is not empty; their elements are walked too.
func zeroFields(v reflect.Value) []string {
	all, set := map[string]bool{}, map[string]bool{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				return
			}
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				p := strings.TrimPrefix(path+"."+f.Name, ".")
				all[p] = true
				if !v.Field(i).IsZero() && (v.Field(i).Kind() != reflect.Slice && v.Field(i).Kind() != reflect.Map || v.Field(i).Len() > 0) {
					set[p] = true
				}
				walk(v.Field(i), p)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), path+"[]")
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value(), path+"{}")
			}
		}
	}
	walk(v, "")
	var zero []string
	for p := range all {
		if !set[p] {
			zero = append(zero, p)
		}
	}
	slices.Sort(zero)
	return zero
}

// Every field of the shards' exports survives the merge: a field added to Export (or Run, or
// anything under them) that Merge does not carry over fails here until it does.
func TestMergeKeepsEveryField(t *testing.T) {
	parts := fullShards(t)
	m, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m = resultstest.RoundTrip(t, m)
	// A merge is not a shard (MergedShards records them), and its overall numbers span
	// policies naive and probe, so they have none.
	if zero := zeroFields(reflect.ValueOf(m)); !slices.Equal(zero, []string{"Overall.Policy", "Run.Shard"}) {
		t.Errorf("the merge dropped %v", zero)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"actions in start order, on the merged clock", actionTimes(m.Actions), []string{"0:1.0", "0:2.0", "1:2.3", "1:2.3"}},
		{"topology shape", fmt.Sprintf("%d %s %s", m.Topology.Replicas, m.Topology.Routing, m.Topology.EventLog), "2 session shared"},
		{"deaths summed by cause, fault and replica", m.Topology.Deaths, []results.DeathsBy{{Cause: "restart", Fault: "deploy", Replica: 1, Sessions: 11}, {Cause: "ttl", Replica: 0, Sessions: 4}}},
		{"event-log errors summed", m.Topology.LogErrors, int64(3)},
		{"run id derived from the shards'", len(m.Run.ID) == 8 && m.Run.ID != "00000000", true},
		{"each shard's id", []string{m.Run.MergedShards[0].ID, m.Run.MergedShards[1].ID}, []string{"00000000", "00000001"}},
		{"the same label kept once", m.Run.Labels["release"], "v1.4.2"},
		{"a label the shards disagree on keeps both", m.Run.Labels["commit"], "abc0,abc1"},
		{"proxies of both shards", m.Run.Proxies["naive"], "127.0.0.1:20000,127.0.0.1:20001"},
		{"phases", len(m.Phases), 2},
		{"interrupted, aborted, error", fmt.Sprint(m.Run.Interrupted, m.Run.Aborted != "", m.Run.Error != ""), "true true true"},
		{"thresholds", len(m.Thresholds), 3},
		{"aborted threshold", m.Thresholds[1].AbortedRun && m.Thresholds[1].AbortOnFail, true},
		{"labels' difference noted", slices.ContainsFunc(m.Run.Notes, func(n string) bool { return strings.Contains(n, "labels differ (commit)") }), true},
		{"same topology not noted", slices.ContainsFunc(m.Run.Notes, func(n string) bool { return strings.Contains(n, "reference servers differ") }), false},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func actionTimes(as []results.ActionAt) []string {
	var out []string
	for _, a := range as {
		out = append(out, fmt.Sprintf("%d:%.1f", *a.Shard, a.StartedAtS))
	}
	return out
}

// Shards whose reference servers differ (or some of which had none) merge, saying so.
func TestMergeTopologyDiffers(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*results.Topology) *results.Topology
		want string
	}{
		{"replicas", func(t *results.Topology) *results.Topology { t.Replicas = 3; return t }, "2 replicas, routing session, event log shared; 3 replicas"},
		{"one without", func(*results.Topology) *results.Topology { return nil }, "event log shared; none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := fullShards(t)
			parts[1].Export.Topology = tc.edit(parts[1].Export.Topology)
			m, err := Merge(parts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Topology == nil || m.Topology.Replicas != 2 {
				t.Errorf("topology %+v, want the first shard's", m.Topology)
			}
			if !slices.ContainsFunc(m.Run.Notes, func(n string) bool { return strings.Contains(n, tc.want) }) {
				t.Errorf("notes %q, want one saying the reference servers differ (%q)", m.Run.Notes, tc.want)
			}
		})
	}
}

// A sharded run of the built-in target served from two processes names both, each once.
func TestMergeNamesEveryTarget(t *testing.T) {
	parts, _ := shards(t, 3, 50)
	for i := range parts {
		parts[i].Export.Run.Target = []string{"http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"}[i%2]
	}
	m, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:1/mcp, http://127.0.0.1:2/mcp"; m.Run.Target != want {
		t.Errorf("merged target %q, want %q", m.Run.Target, want)
	}
}
