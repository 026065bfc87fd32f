package workloads

import (
	"errors"
	"strings"
	"testing"
)

const thresholdsBase = `name: t
target:
  builtin:
    session_ttl: 3s
phases:
  - name: a
    duration: 1s
    calls: true
groups:
  - name: naive
    clients: 1
    policy: naive
  - name: probe
    clients: 1
    policy: probe
thresholds:
`

func TestThresholds(t *testing.T) {
	w, err := Parse("t.yaml", []byte(thresholdsBase+`  - probe.misattributed_errors == 0
  - "probe.probe_latency.p99 < 50ms"
  - naive.retry_amplification < 2
  - expr: overall.misattributed_errors < 10
    abort_on_fail: true
  - expr: overall.drops >= 1
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Thresholds) != 5 {
		t.Fatalf("%d thresholds", len(w.Thresholds))
	}
	for i, want := range []struct {
		scope, metric, op string
		bound             float64
		abort             bool
	}{
		{"probe", "misattributed_errors", "==", 0, false},
		{"probe", "probe_latency.p99", "<", 50_000, false},
		{"naive", "retry_amplification", "<", 2, false},
		{"overall", "misattributed_errors", "<", 10, true},
		{"overall", "drops", ">=", 1, false},
	} {
		th := w.Thresholds[i]
		if th.Scope != want.scope || th.Metric.Name != want.metric || th.Op != want.op || th.Bound != want.bound || th.AbortOnFail != want.abort {
			t.Errorf("threshold %d: %+v", i, th)
		}
	}
}

// Every mistake is reported at the line and column where it is, with what to do.
func TestThresholdErrors(t *testing.T) {
	for _, tc := range []struct {
		name, entries string
		line, col     int
		want          string
	}{
		{"unknown metric", "  - probe.misatributed_errors == 0\n", 17, 11, `thresholds[0]: unknown metric "misatributed_errors"; did you mean "misattributed_errors"?`},
		{"quoted", "  - \"probe.probe_latency.p99 < 50\"\n", 17, 32, "thresholds[0]: probe_latency.p99 is a duration, got the bare number 50; add a unit, e.g. 50ms"},
		{"no group", "  - probes.drops == 0\n", 17, 5, `threshold "probes.drops == 0" is about group "probes", which this workload does not have; did you mean "probe"? use one of naive, probe, or overall`},
		{"no comparison", "  - probe.drops\n", 17, 16, "no comparison"},
		{"not a string", "  - 5\n", 17, 5, "must be a string, got 5"},
		{"duplicate", "  - probe.drops == 0\n  - probe.drops == 0\n", 18, 5, "is listed twice (first at 17:5)"},
		{"abort on a percentile", "  - expr: probe.probe_latency.p99 < 5ms\n    abort_on_fail: true\n", 18, 20, "thresholds[0].abort_on_fail: abort_on_fail needs a metric that only grows"},
		{"abort with a lower bound", "  - expr: probe.drops > 1\n    abort_on_fail: true\n", 18, 20, "abort_on_fail needs an upper bound"},
		{"unknown key", "  - expr: probe.drops == 0\n    abort: true\n", 18, 5, `unknown key "abort"; did you mean "abort_on_fail"?`},
		{"missing expr", "  - abort_on_fail: true\n", 17, 5, "thresholds[0].expr: missing"},
		{"not a list", "  probe.drops: 0\n", 17, 3, "must be a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(thresholdsBase+tc.entries))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v", err)
			}
			e := ve.Errs[0]
			if e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Error(), tc.want) {
				t.Errorf("got %s\nwant %d:%d containing %q", e, tc.line, tc.col, tc.want)
			}
		})
	}
}
