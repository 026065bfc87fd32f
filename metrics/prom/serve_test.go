package prom

import (
	"context"
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
	lm, err := Serve("127.0.0.1:0", map[string]string{"workload": "w"}, NewCollector([]*metrics.Recorder{naive}, func(int) int64 { return 2 }))
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	text := scrape(t, lm.Addr())
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

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(body)
}

// After the run the endpoint serves the final numbers until one scrape has read them (or the
// linger time passes), then closes.
func TestLiveMetricsLinger(t *testing.T) {
	rec := metrics.NewRecorder("naive", "naive", 1)
	lm, err := Serve("127.0.0.1:0", nil, NewCollector([]*metrics.Recorder{rec}, nil))
	if err != nil {
		t.Fatal(err)
	}
	lm.Finish() // the run ended (the observer's Stop)
	done := make(chan struct{})
	go func() {
		_ = lm.Linger(context.Background(), time.Hour) // only the final scrape ends it
		close(done)
	}()
	rec.Add(metrics.MisattributedErrors, 3) // a late count, there for the final scrape
	if text := scrape(t, lm.Addr()); !strings.Contains(text, `mcpchaos_misattributed_errors_total{group="naive",policy="naive"} 3`) {
		t.Errorf("the final scrape lacks the final count:\n%s", text)
	}
	<-done // the final scrape ended the linger, long before the hour
	if _, err := http.Get("http://" + lm.Addr() + "/metrics"); err == nil {
		t.Error("the endpoint still answers after the final scrape")
	}
	// Without a scrape the linger ends at its time; an ended context ends it at once.
	lm2, _ := Serve("127.0.0.1:0", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = lm2.Linger(ctx, time.Hour)
}
