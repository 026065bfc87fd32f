package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/merge"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// tinyWorkload lasts about 1.5 s: sessions die during an outage; afterwards the naive group
// blames tools for it and the probe group does not.
const tinyWorkload = `name: tiny
target:
  builtin:
    session_ttl: 300ms
    retention: 3s
    notify_interval: 100ms
    retry: 50ms
phases:
  - {name: active, duration: 400ms, calls: true}
  - {name: quiet, duration: ttl+300ms, calls: false}
  - {name: after, duration: 500ms, calls: true}
groups:
  - {name: naive, clients: 3, policy: naive, call_every: 100ms, retry_backoff: 10ms}
  - {name: probe, clients: 3, policy: probe, call_every: 100ms, retry_backoff: 10ms}
faults:
  - {name: outage, toxic: down, at: 450ms, for: 500ms}
`

// steady is tiny with 2 s of calls and no outage, for the tests of what is done with an
// export (compare, merge), which need calls made, not sessions cut: with tiny's 400 ms of calls
// and its outage, a runner starved at load 20 made no call that succeeded, and the run said,
// rightly, that it measured nothing.
func steady(t *testing.T) *workloads.Workload {
	t.Helper()
	y := strings.Replace(tinyWorkload, "{name: active, duration: 400ms,", "{name: active, duration: 2s,", 1)
	y = y[:strings.Index(y, "faults:")]
	w, err := workloads.Parse("steady.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestGateExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&results.GateError{Msg: "1 of 2 thresholds failed"}, exitThresholds},
		{fmt.Errorf("wrapped: %w", &results.GateError{Msg: "x"}), exitThresholds},
		{&results.FileError{Path: "r.json", Msg: "truncated"}, exitUsage},
		{&results.MismatchError{Msg: "shard 0 appears twice"}, exitUsage},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// The check for compare: a run against itself reports no change and exits 0; against
// a degraded run of the same workload it reports the regression and exits 99.
func TestCompareGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	if err := runWorkload(context.Background(), steady(t), runFlags{out: base, progress: "off", quiet: true}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	e, err := results.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	// Degrade: the probe group now blames tools for two session deaths, and a threshold that
	// held now fails.
	probe := e.Group("probe")
	probe.Counters["misattributed_errors"] += 2
	e.Overall.Counters["misattributed_errors"] += 2
	e.Thresholds = []results.ThresholdResult{{Expr: "probe.misattributed_errors == 0", Pass: false, Actual: "2"}}
	degraded := filepath.Join(dir, "degraded.json")
	if err := results.WriteFile(degraded, e); err != nil {
		t.Fatal(err)
	}
	compare := func(args ...string) (string, int) {
		var out bytes.Buffer
		root := newRoot()
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"compare"}, args...))
		code := exitCode(root.ExecuteContext(context.Background()))
		return out.String(), code
	}
	if out, code := compare(base, base); code != exitOK || !strings.Contains(out, "no change in any of") {
		t.Errorf("compare with itself: exit %d\n%s", code, out)
	}
	out, code := compare(base, degraded)
	if !strings.HasPrefix(out, "the current run failed 1 of its own 1 thresholds") {
		t.Errorf("compare does not say first that the current run failed its thresholds:\n%s", out)
	}
	if code != exitThresholds {
		t.Errorf("compare with a degraded run: exit %d, want %d\n%s", code, exitThresholds, out)
	}
	// overall sums the groups: it is judged per group (a row reported only), so one regression,
	// said in words too.
	for _, want := range []string{"verdict: REGRESSED (1 regression)", "what changed: group probe now blames tools for session deaths (misattributed_errors 0 → 2)",
		"REGRESSED (may not grow)", "probe      misattributed_errors", "1 regression,", "1 more row moved and is reported only"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A tolerance that allows it turns the regression into an ok; the run's own failed
	// threshold still fails the gate, and once it passes, compare exits 0.
	if out, code := compare(base, degraded, "-t", "misattributed_errors=+5"); code != exitThresholds || strings.Contains(out, "REGRESSED (may not grow)") || !strings.Contains(out, "ok (may grow 5)") {
		t.Errorf("with a tolerance, a failed threshold: exit %d\n%s", code, out)
	}
	e.Thresholds = nil
	if err := results.WriteFile(degraded, e); err != nil {
		t.Fatal(err)
	}
	if out, code := compare(base, degraded, "-t", "misattributed_errors=+5"); code != exitOK {
		t.Errorf("with a tolerance: exit %d\n%s", code, out)
	}
}

// Shards run in parallel with one --start-at, then merge: the merged counts are the sums and
// the merged histograms are those of one histogram holding every shard's samples.
func TestShardsMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Both shards set up before this time; 1 s was not always enough under load.
	at := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	// A shard holds one or two clients of a group: with tiny's 400 ms of calls, a shard starved
	// at load 12 started its session too late to make any call, and the run said it measured
	// nothing. The merge is what is tested here: steady's 2 s of calls, so that every shard
	// makes some.
	w := steady(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			errs[i] = runWorkload(context.Background(), w, runFlags{out: filepath.Join(dir, fmt.Sprintf("s%d.json", i)),
				progress: "off", quiet: true, shard: fmt.Sprintf("%d/2", i), startAt: at,
				thresholds: []string{"naive.sessions_started < 3"}}, io.Discard, io.Discard)
		})
	}
	wg.Wait()
	var parts []results.Part
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v (a shard leaves the threshold verdict to the merge)", i, err)
		}
		p := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		e, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if e.Run.Shard == nil || e.Run.Shard.Index != i || e.Run.Shard.StartAt == nil {
			t.Fatalf("shard %d records %+v", i, e.Run.Shard)
		}
		parts = append(parts, results.Part{File: p, Export: e})
	}
	if !parts[0].Export.Run.Start.Equal(parts[1].Export.Run.Start) {
		t.Errorf("--start-at did not align the shards: %s, %s", parts[0].Export.Run.Start, parts[1].Export.Run.Start)
	}
	m, err := merge.Merge(parts, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for gi, g := range m.Groups {
		a, b := parts[0].Export.Groups[gi], parts[1].Export.Groups[gi]
		if g.Clients != 3 || a.Clients+b.Clients != 3 {
			t.Errorf("%s: clients %d = %d + %d, want 3", g.Name, g.Clients, a.Clients, b.Clients)
		}
		for k, v := range g.Counters {
			if v != a.Counters[k]+b.Counters[k] {
				t.Errorf("%s %s: %d, want %d + %d", g.Name, k, v, a.Counters[k], b.Counters[k])
			}
		}
		for _, h := range metrics.Hists() {
			all := metrics.NewHistogram()
			for _, s := range []results.Group{a, b} {
				d, err := s.Histograms[h.String()].Decoded()
				if err != nil {
					t.Fatal(err)
				}
				all.Merge(d)
			}
			got, _ := g.Histograms[h.String()].Decoded()
			if !got.Equals(all) || g.Histograms[h.String()].P99US != all.ValueAtQuantile(99) {
				t.Errorf("%s %s: merged histogram is not the one holding every sample", g.Name, h)
			}
		}
	}
	// Each of the group's 3 clients starts a session: the merge has 3 or more and fails the
	// threshold that each shard (2 and 1 clients) may pass on its own. (The threshold used
	// to be on misattributed errors, which a starved 1.5 s run did not always make.)
	if err := results.VerdictErr(m); exitCode(err) != exitThresholds {
		t.Errorf("merged verdict %v, want the naive threshold to fail (%d sessions started)", err, m.Groups[0].Counters["sessions_started"])
	}
}

// compare's exit statuses for what is not a regression: a starved run's timing rows are
// inconclusive (exit 0, 99 with --strict); a current run that did not complete is said first
// and exits 1 (docs/gate.md, "Exit status").
func TestCompareExitStatuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	if err := runWorkload(context.Background(), steady(t), runFlags{out: base, progress: "off", quiet: true}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	e, err := results.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	variant := func(name string, edit func(*results.Export)) string {
		c, _ := results.ReadFile(base)
		edit(c)
		p := filepath.Join(dir, name)
		if err := results.WriteFile(p, c); err != nil {
			t.Fatal(err)
		}
		return p
	}
	compare := func(args ...string) (string, int) {
		var out bytes.Buffer
		root := newRoot()
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"compare"}, args...))
		code := exitCode(root.ExecuteContext(context.Background()))
		return out.String(), code
	}
	starved := variant("starved.json", func(c *results.Export) {
		g := *e.Generator
		g.Starved, g.StarvedS, g.Windows = true, g.Seconds, max(g.Windows, 1)
		c.Generator = &g
		c.Group("probe").Counters["tool_calls_ok"] += 100 // an amount of work moved
		c.Overall.Counters["tool_calls_ok"] += 100
	})
	if out, code := compare(base, starved); code != exitOK || !strings.Contains(out, "starved: current starved") {
		t.Errorf("a starved run: exit %d\n%s", code, out)
	}
	// The server's floor (server_latency.p5, on the kernel's clock) is judged however starved the
	// runner, so --strict has a verdict to stand on: ok, with the rows starvation moves held back.
	if out, code := compare("--strict", base, starved); code != exitOK || !strings.Contains(out, "verdict: OK") || !strings.Contains(out, "held back") {
		t.Errorf("a starved run with its floor, with --strict: exit %d\n%s", code, out)
	}
	// Without a floor (Toxiproxy elsewhere, HTTP/2, not Linux) a starved run's latency is not
	// judged: inconclusive, which --strict fails.
	noFloor := func(c *results.Export) {
		for _, g := range c.AllGroups() {
			delete(g.Histograms, gate.FloorHist)
		}
	}
	baseNoFloor := variant("base-nofloor.json", noFloor)
	starvedNoFloor := variant("starved-nofloor.json", func(c *results.Export) {
		g := *e.Generator
		g.Starved, g.StarvedS, g.Windows = true, g.Seconds, max(g.Windows, 1)
		c.Generator = &g
		c.Group("probe").Counters["tool_calls_ok"] += 100 // an amount of work moved
		c.Overall.Counters["tool_calls_ok"] += 100
		noFloor(c)
	})
	if out, code := compare("--strict", baseNoFloor, starvedNoFloor); code != exitThresholds || !strings.Contains(out, "verdict: INCONCLUSIVE") {
		t.Errorf("a starved run without a floor, with --strict: exit %d\n%s", code, out)
	}
	cut := variant("cut.json", func(c *results.Export) { c.Run.Interrupted = true })
	if out, code := compare(base, cut); code != exitRuntime || !strings.HasPrefix(out, "the current run did not complete (interrupted)") {
		t.Errorf("an interrupted run: exit %d\n%q", code, out)
	}
}
