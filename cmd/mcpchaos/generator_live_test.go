package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/shards"
)

// liveWorkload is a short run against the built-in server, long enough for the generator's
// first windows (a second each) to close while the run goes on.
const liveWorkload = `name: live
target:
  builtin: {session_ttl: 300ms, retention: 3s, notify_interval: 100ms, retry: 50ms}
phases:
  - {name: active, duration: 2500ms, calls: true}
  - {name: quiet, duration: ttl+300ms, calls: false}
  - {name: after, duration: 800ms, calls: true}
groups:
  - {name: naive, clients: 3, policy: naive, call_every: 100ms, retry_backoff: 10ms}
  - {name: probe, clients: 3, policy: probe, call_every: 100ms, retry_backoff: 10ms}
`

// A real run shows what its load generator went through where a user looks while it runs and
// after: the /metrics endpoint serves the mcpchaos_generator_* series and the dispatch_lag
// histogram, the --progress json lines carry the last second's generator figures, and the
// export's generator section has the dispatch lag of the calls it answered. Every mcpchaos
// series the endpoint served is defined in docs/metrics.md.
func TestGeneratorFiguresLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpchaos for about 4 s")
	}
	dir := t.TempDir()
	wl := filepath.Join(dir, "live.yaml")
	if err := os.WriteFile(wl, []byte(liveWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	// The final numbers stay up until a scrape has read them: at most 30 s, as a loaded
	// machine may delay the next scrape by seconds; a scrape that comes sooner ends the wait.
	printed := runCmd(t, dir, "run", wl, "--out", out, "--progress", "json", "--label", "release=v9",
		"--metrics-addr", freeAddr(t), "--metrics-linger", "30s")

	for _, series := range []string{ // regular expressions
		`mcpchaos_generator_timer_lag_p99_seconds\{run_id="[0-9a-f]{8}",workload="live"\} `,
		`mcpchaos_generator_sched_latency_p99_seconds\{`, `mcpchaos_generator_cpu_share\{`,
		`mcpchaos_generator_gc_pause_seconds\{`, `mcpchaos_generator_starved\{`,
		`mcpchaos_generator_starved_seconds_total\{`,
		`mcpchaos_dispatch_lag_seconds_count\{group="probe",policy="probe",`,
		`mcpchaos_run_finished\{run_id="[0-9a-f]{8}",workload="live"\} 1`,
		`mcpchaos_run_label\{label="release",run_id="[0-9a-f]{8}",value="v9",workload="live"\} 1`,
	} {
		if !regexp.MustCompile(series).MatchString(printed) {
			t.Errorf("no scrape of /metrics matched %s", series)
		}
	}

	var gen *generator.Live
	for _, line := range strings.Split(printed, "\n") {
		if !strings.HasPrefix(line, `{"time":`) { // a --progress json line (JSON Lines on stderr)
			continue
		}
		var st shards.Status
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			t.Fatalf("a --progress json line does not parse: %v\n%s", err, line)
		}
		if st.Generator != nil {
			gen = st.Generator
		}
	}
	if gen == nil || gen.AtS <= 0 || gen.CPUShare <= 0 {
		t.Errorf("no --progress json line carried the generator's figures of a closed window: %+v", gen)
	}

	exp, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	g := exp.Generator
	if g == nil || g.Windows == 0 || g.TimerLag.Count == 0 || g.TurnLag.Count == 0 {
		t.Fatalf("the export's generator section is missing or empty: %+v", g)
	}
	calls, lags := histCount(t, exp, metrics.ToolCallLatency), histCount(t, exp, metrics.DispatchLag)
	if lags == 0 || lags != calls || g.DispatchLag.Count != lags {
		t.Errorf("dispatch lag samples %d (generator section %d) for %d answered calls: want one a call", lags, g.DispatchLag.Count, calls)
	}

	docs := readDoc(t)
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# HELP (mcpchaos_\w+)`).FindAllStringSubmatch(printed, -1) {
		if !seen[m[1]] && !documented(docs, m[1]) {
			t.Errorf("/metrics served %s, which docs/metrics.md does not define", m[1])
		}
		seen[m[1]] = true
	}
	if len(seen) < 20 {
		t.Errorf("/metrics served only %d mcpchaos families", len(seen))
	}
}

// histCount is how many samples the run's overall histogram h has.
func histCount(t *testing.T, exp *results.Export, h metrics.Hist) int64 {
	t.Helper()
	d, err := exp.Overall.Histograms[h.String()].Decoded()
	if err != nil {
		t.Fatalf("%s: %v", h, err)
	}
	return d.TotalCount()
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// documented says whether docs/metrics.md defines the Prometheus family name: by its own name,
// or, for the families made from every counter and histogram (mcpchaos_<counter>_total,
// mcpchaos_<histogram>_seconds), by the counter's or histogram's name.
func documented(docs, name string) bool {
	if strings.Contains(docs, "`"+name) {
		return true
	}
	base := strings.TrimPrefix(name, "mcpchaos_")
	for _, suffix := range []string{"_total", "_seconds"} {
		if b, ok := strings.CutSuffix(base, suffix); ok && strings.Contains(docs, "| `"+b+"`") {
			return true
		}
	}
	return false
}

// docs/metrics.md defines every counter, every histogram and every field of the export's
// generator section, in a table row of its own.
func TestDocsDefineEveryMetric(t *testing.T) {
	docs := readDoc(t)
	for _, c := range metrics.Counters() {
		if !strings.Contains(docs, "| `"+c.String()+"`") {
			t.Errorf("counter %s has no row in docs/metrics.md", c)
		}
	}
	for _, h := range metrics.Hists() {
		if !strings.Contains(docs, "| `"+h.String()+"`") {
			t.Errorf("histogram %s has no row in docs/metrics.md", h)
		}
	}
	rt := reflect.TypeFor[generator.Report]()
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(docs, "`"+tag+"`") {
			t.Errorf("the generator section's %s has no definition in docs/metrics.md", tag)
		}
	}
}
