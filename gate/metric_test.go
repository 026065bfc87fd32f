package gate

import (
	"strings"
	"testing"
)

func TestParseMetric(t *testing.T) {
	for _, tc := range []struct {
		in, name string
		unit     Unit
		mono     bool
	}{
		{"drops", "drops", UnitCount, true},
		{"clients", "clients", UnitCount, false},
		{"errors", "errors", UnitCount, true},
		{"errors.too_large", "errors.too_large", UnitCount, true},
		{"retry_amplification", "retry_amplification", UnitRatio, false},
		{"false_healthy_seconds", "false_healthy_seconds", UnitSeconds, true},
		{"probe_latency.p99", "probe_latency.p99", UnitDuration, false},
		{"probe_latency.p999", "probe_latency.p99.9", UnitDuration, false},
		{"probe_latency.p9999", "probe_latency.p99.99", UnitDuration, false},
		{"probe_latency.p100", "probe_latency.p100", UnitDuration, false},
		{"probe_latency.p0", "probe_latency.p0", UnitDuration, false},
		{"probe_latency.count", "probe_latency.count", UnitCount, false},
		{"detection_delay.mean", "detection_delay.mean", UnitDuration, false},
	} {
		m, err := ParseMetric(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if m.Name != tc.name || m.Unit() != tc.unit || m.Monotonic() != tc.mono {
			t.Errorf("%s: got %s %s %v", tc.in, m.Name, m.Unit(), m.Monotonic())
		}
	}
	for _, bad := range []string{"", "drop", "probe_latency", "probe_latency.p", "probe_latency.pxx", "probe_latency.p100.1", "errors.", "nope.p99"} {
		if _, err := ParseMetric(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := ParseMetric("drop"); err == nil || !strings.Contains(err.Error(), `did you mean "drops"?`) {
		t.Errorf("no suggestion: %v", err)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		u    Unit
		v    float64
		want string
	}{
		{UnitDuration, 850, "850µs"},
		{UnitDuration, 12_400, "12.4ms"},
		{UnitDuration, 1_500_000, "1.5s"},
		{UnitDuration, 125e6, "2m5s"},
		{UnitCount, 42, "42"},
		{UnitRatio, 8, "8.00"},
	} {
		if got := FormatValue(tc.u, tc.v); got != tc.want {
			t.Errorf("FormatValue(%s, %v) = %q, want %q", tc.u, tc.v, got, tc.want)
		}
	}
}
