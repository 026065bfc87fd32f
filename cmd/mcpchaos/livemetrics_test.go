package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
)

func TestLiveMetrics(t *testing.T) {
	naive := metrics.NewRecorder("naive", "naive", 3)
	naive.Add(metrics.MisattributedErrors, 7)
	naive.Error(metrics.ErrReset)
	naive.Enter(metrics.StateLive)
	naive.AddFalseHealthy(1500 * time.Millisecond)
	for _, d := range []time.Duration{300 * time.Microsecond, 2 * time.Millisecond, 40 * time.Millisecond} {
		naive.Record(metrics.ToolCallLatency, 0, d)
	}
	addr, stop, err := serveMetrics("127.0.0.1:0", []*metrics.Recorder{naive}, func(int) int64 { return 2 }, map[string]string{"workload": "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`mcpchaos_misattributed_errors_total{group="naive",policy="naive",workload="w"} 7`,
		`mcpchaos_transport_errors_total{group="naive",kind="reset",policy="naive",workload="w"} 1`,
		`mcpchaos_clients{group="naive",policy="naive",state="live",workload="w"} 1`,
		`mcpchaos_believed_live_but_dead{group="naive",policy="naive",workload="w"} 2`,
		`mcpchaos_false_healthy_seconds_total{group="naive",policy="naive",workload="w"} 1.5`,
		`mcpchaos_tool_call_latency_seconds_bucket{group="naive",policy="naive",workload="w",le="0.00025"} 0`,
		`mcpchaos_tool_call_latency_seconds_bucket{group="naive",policy="naive",workload="w",le="0.0005"} 1`,
		`mcpchaos_tool_call_latency_seconds_bucket{group="naive",policy="naive",workload="w",le="0.0025"} 2`,
		`mcpchaos_tool_call_latency_seconds_bucket{group="naive",policy="naive",workload="w",le="0.05"} 3`,
		`mcpchaos_tool_call_latency_seconds_count{group="naive",policy="naive",workload="w"} 3`,
		"# TYPE mcpchaos_probe_latency_seconds histogram",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

func TestCheckMetricsAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
		ok     bool
	}{
		{"127.0.0.1:9464", false, true},
		{"localhost:9464", false, true},
		{"[::1]:9464", false, true},
		{"0.0.0.0:9464", false, false},
		{"0.0.0.0:9464", true, true},
		{"10.0.0.1:9464", false, false},
		{"9464", false, false},
	} {
		if err := checkMetricsAddr(tc.addr, tc.public); (err == nil) != tc.ok {
			t.Errorf("checkMetricsAddr(%q, %v) = %v", tc.addr, tc.public, err)
		}
	}
}
