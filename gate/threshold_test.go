package gate

import (
	"errors"
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		scope  string
		metric string
		op     string
		bound  float64
	}{
		{"probe.misattributed_errors == 0", "probe", "misattributed_errors", "==", 0},
		{"probe.probe_latency.p99 < 50ms", "probe", "probe_latency.p99", "<", 50_000},
		{"naive.retry_amplification < 2", "naive", "retry_amplification", "<", 2},
		{"  overall.errors.reset<=10 ", "overall", "errors.reset", "<=", 10},
		{"overall.errors >= 1", "overall", "errors", ">=", 1},
		{"g-1.tool_call_latency.p999 != 1.5s", "g-1", "tool_call_latency.p99.9", "!=", 1_500_000},
		{"g.tool_call_latency.p99.9 > 200us", "g", "tool_call_latency.p99.9", ">", 200},
		{"g.tool_call_latency.p95 > 200µs", "g", "tool_call_latency.p95", ">", 200},
		{"g.detection_delay.max < 2m", "g", "detection_delay.max", "<", 120e6},
		{"g.detection_delay.count >= 1", "g", "detection_delay.count", ">=", 1},
		{"g.false_healthy_seconds < 5", "g", "false_healthy_seconds", "<", 5},
		{"g.false_healthy_seconds < 500ms", "g", "false_healthy_seconds", "<", 0.5},
		{"g.clients == 1e3", "g", "clients", "==", 1000},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if th.Scope != tc.scope || th.Metric.Name != tc.metric || th.Op != tc.op || th.Bound != tc.bound {
			t.Errorf("%q: got %s %s %s %v", tc.expr, th.Scope, th.Metric.Name, th.Op, th.Bound)
		}
	}
}

// Every mistake names the column where it starts and what to do.
func TestParseThresholdErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		col  int
		want string
	}{
		{"probe.misattributed_errors", 27, "no comparison"},
		{"probe.misattributed_errors = 0", 28, "use =="},
		{"misattributed_errors == 0", 1, "does not say which group; write GROUP.misattributed_errors or overall.misattributed_errors"},
		{"probe_latency.p99 < 5ms", 1, "does not say which group"},
		{"probe.misatributed_errors == 0", 7, `did you mean "misattributed_errors"?`},
		{"probe.probe_latency < 50ms", 7, "probe_latency is a histogram; name a statistic of it, e.g. probe_latency.p99"},
		{"probe.probe_latency.p101 < 50ms", 7, "unknown statistic"},
		{"probe.probe_latency.p125 < 50ms", 7, "unknown statistic"},
		{"probe.probe_latency.p99 < 50", 27, "is a duration, got the bare number 50; add a unit, e.g. 50ms"},
		{"probe.probe_latency.p99 < 50 ms", 27, "is not a duration"},
		{"probe.drops < 5ms", 15, "drops is a count"},
		{"probe.drops < 1.5", 15, "counts are whole numbers"},
		{"probe.drops < -1", 15, "is negative"},
		{"probe.drops < ", 15, "nothing after <"},
		{"< 5", 1, "nothing before <"},
		{"probe.drops < 5 < 6", 17, "a second comparison"},
		{"Probe.drops < 5", 1, "not a group name"},
		{"probe.errors.resett < 5", 7, `unknown error kind "resett"; did you mean "reset"?`},
		{"probe.retry_amplification < 2x", 29, "is a ratio"},
		{"probé.drops <", 1, "not a group name"},
		{"ab.drops < x", 12, "not a number"},
	} {
		_, err := ParseThreshold(tc.expr)
		var se *ThresholdSyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a syntax error", tc.expr, err)
			continue
		}
		if se.Column() != tc.col || !strings.Contains(se.Msg, tc.want) {
			t.Errorf("%q: got column %d %q, want column %d containing %q", tc.expr, se.Column(), se.Msg, tc.col, tc.want)
		}
	}
}

func TestEarly(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		early bool
	}{
		{"probe.misattributed_errors == 0", true},
		{"probe.misattributed_errors < 3", true},
		{"probe.errors.reset <= 3", true},
		{"probe.false_healthy_seconds < 3s", true},
		{"probe.misattributed_errors > 3", false},
		{"probe.misattributed_errors != 0", false},
		{"probe.retry_amplification < 2", false},
		{"probe.probe_latency.p99 < 2ms", false},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if th.Early() != tc.early || (th.EarlyError() == nil) != tc.early {
			t.Errorf("%s: Early %v (%v), want %v", tc.expr, th.Early(), th.EarlyError(), tc.early)
		}
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"probe.misattributed_errors == 0", "a.probe_latency.p99.9 < 5ms", "x.errors.reset<=1", "=", "a.b.c.d >= 1e400", "a.false_healthy_seconds < 1µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			var se *ThresholdSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %v is not a ThresholdSyntaxError", s, err)
			}
			_ = se.Column()
			return
		}
		// What parses, parses again the same from its canonical form.
		again, err := ParseThreshold(th.String())
		if err != nil || again.Scope != th.Scope || again.Metric.Name != th.Metric.Name || again.Op != th.Op {
			t.Fatalf("%q → %q → %+v, %v", s, th.String(), again, err)
		}
	})
}

// A --tolerance argument splits at its last '=' (a pattern may hold one); no '=' is an error
// that shows the form.
func TestParseToleranceArg(t *testing.T) {
	r, err := ParseToleranceArg("probe_latency.p99=+20%")
	if err != nil || r.Pattern != "probe_latency.p99" {
		t.Fatalf("got %+v, %v", r, err)
	}
	if _, err := ParseToleranceArg("probe_latency.p99"); err == nil || !strings.Contains(err.Error(), "want PATTERN=SPEC") {
		t.Errorf("no '=': %v", err)
	}
	if _, err := ParseToleranceArg("x=sometimes"); err == nil {
		t.Error("a bad SPEC passed")
	}
}
