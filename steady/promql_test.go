package steady_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpchaos/mcpchaos/internal/promtest"
	"github.com/mcpchaos/mcpchaos/steady"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// PromQL probes against a real Prometheus (Debian's 2.42) scraping a server's own metrics on
// loopback: one sample is judged; no data, several series, a bad query and a server that is
// not Prometheus observe nothing, and say why.
func TestPromQLProbe(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	held := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "server_sessions_held", Help: "sessions held"}, []string{"replica"})
	held.WithLabelValues("0").Set(4)
	held.WithLabelValues("1").Set(6)
	reg.MustRegister(held)
	target := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer target.Close()
	prom := promtest.Start(t, promtest.Options{Targets: []string{strings.TrimPrefix(target.URL, "http://")}})
	prom.WaitFor(t, `count(server_sessions_held) == 2`, 60*time.Second)
	notProm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>login</html>")) }))
	defer notProm.Close()

	tol := func(s string) *vocab.Tolerance {
		tt, err := vocab.ParseTolerance(s)
		if err != nil {
			t.Fatal(err)
		}
		return &tt
	}
	before := 9.5
	cases := []struct {
		name, url, query string
		tol              *vocab.Tolerance
		pass             bool
		want             string
	}{
		{"sum within", prom.URL, "sum(server_sessions_held)", tol("value <= 10"), true, "value 10"},
		{"sum outside", prom.URL, "sum(server_sessions_held)", tol("value <= 5"), false, "10 is not <= 5"},
		{"within before", prom.URL, "sum(server_sessions_held)", tol("within 10% of before"), true, "value 10"},
		{"one series", prom.URL, `server_sessions_held{replica="1"}`, tol("value == 6"), true, "value 6"},
		{"scalar", prom.URL, "scalar(sum(server_sessions_held)) * 2", tol("value == 20"), true, "value 20"},
		{"several series", prom.URL, "server_sessions_held", tol("value <= 10"), false, "returned 2 series; aggregate them"},
		{"no data", prom.URL, "server_sessions_leaked", tol("value <= 10"), false, "returned no data"},
		{"bad query", prom.URL, "sum(rate(", tol("value <= 10"), false, "the query failed (bad_data)"},
		{"not prometheus", notProm.URL, "up", tol("value == 1"), false, "not a Prometheus API answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := steady.Probe{Name: c.name, Check: steady.PromQL{URL: c.url, Query: c.query}, Tolerance: c.tol, Timeout: 10 * time.Second}
			r := p.Run(context.Background(), &before)
			got := r.Detail
			if !c.pass {
				got = r.Why
			}
			if r.Pass != c.pass || !strings.Contains(got, c.want) {
				t.Errorf("pass %v detail %q why %q, want pass %v with %q", r.Pass, r.Detail, r.Why, c.pass, c.want)
			}
		})
	}
}
