package promtest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/promtest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The server scrapes a target set after it started, and a query sees the target's value.
func TestStartScrapesATargetSetLater(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "promtest_answer", Help: "a known value"})
	g.Set(42)
	reg.MustRegister(g)
	target := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer target.Close()

	prom := promtest.Start(t, promtest.Options{})
	if !strings.HasPrefix(prom.URL, "http://127.0.0.1:") || prom.PID <= 0 {
		t.Fatalf("URL %q PID %d: want a loopback URL and our process", prom.URL, prom.PID)
	}
	prom.SetTargets(t, strings.TrimPrefix(target.URL, "http://"))
	got := prom.WaitFor(t, "promtest_answer", 60*time.Second)
	if len(got) != 1 || got[0].Value != 42 || got[0].Labels["job"] != "mcpchaos" {
		t.Fatalf("promtest_answer = %+v, want one sample 42 from job mcpchaos", got)
	}
	if _, err := prom.Query(context.Background(), "sum(rate("); err == nil {
		t.Fatal("a malformed query answered without an error")
	}
	prom.Stop()
	c := http.Client{Timeout: 2 * time.Second}
	if resp, err := c.Get(prom.URL + "/-/ready"); err == nil {
		resp.Body.Close()
		t.Fatalf("prometheus still answers after Stop")
	}
}
