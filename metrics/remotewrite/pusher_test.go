package remotewrite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/promtest"
	"github.com/mcpchaos/mcpchaos/metrics/remotewrite"
)

// testRegistry holds a counter by group, a gauge and a histogram, as the run's collectors do.
func testRegistry() (*prometheus.Registry, *prometheus.CounterVec, prometheus.Histogram) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpchaos_test_drops_total", Help: "drops"}, []string{"group"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mcpchaos_test_latency_seconds", Help: "latency", Buckets: []float64{0.01, 0.1, 1}})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpchaos_test_finished", Help: "finished"})
	reg.MustRegister(c, h, g)
	g.Set(1)
	c.WithLabelValues("probe") // the run's collectors have every group's series from the start
	return reg, c, h
}

// A real Prometheus receives the series with the run's labels, and the final values (those
// gathered at Stop) are the ones it answers with.
func TestPushReachesPrometheus(t *testing.T) {
	base := promtest.Start(t, promtest.Options{RemoteWriteReceiver: true}).URL
	reg, c, h := testRegistry()
	p, err := remotewrite.Start(reg, remotewrite.Options{
		URL:    base + "/api/v1/write",
		Labels: map[string]string{"run_id": "r-42", "release": "v1.4.2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(-3 * time.Second)
	for i := range 3 {
		c.WithLabelValues("probe").Add(2)
		h.Observe(0.05)
		p.Push(now.Add(time.Duration(i) * time.Second))
	}
	c.WithLabelValues("probe").Add(5) // only the final push carries it
	c.WithLabelValues("naive").Add(1)
	st := p.Stop(context.Background(), now.Add(3*time.Second))
	if !st.Final || st.Sent != 4 || st.Failed != 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v: want 4 batches sent, the final one among them, none failed or dropped", st)
	}
	got := query(t, base, `mcpchaos_test_drops_total{run_id="r-42",release="v1.4.2"}`)
	want := map[string]float64{"probe": 11, "naive": 1}
	if len(got) != len(want) {
		t.Fatalf("drops series: %+v, want %v", got, want)
	}
	for _, s := range got {
		if s.Value != want[s.Metric["group"]] {
			t.Errorf("%v = %v, want %v", s.Metric, s.Value, want[s.Metric["group"]])
		}
	}
	if v := query(t, base, `mcpchaos_test_latency_seconds_bucket{run_id="r-42",le="0.1"}`); len(v) != 1 || v[0].Value != 3 {
		t.Errorf("histogram bucket le=0.1: %+v, want 3", v)
	}
	if v := query(t, base, `histogram_quantile(0.5, mcpchaos_test_latency_seconds_bucket{run_id="r-42"})`); len(v) != 1 || v[0].Value <= 0.01 || v[0].Value > 0.1 {
		t.Errorf("median from the pushed buckets: %+v, want within (0.01, 0.1]", v)
	}
	if v := query(t, base, `count_over_time(mcpchaos_test_finished{run_id="r-42"}[1m])`); len(v) != 1 || v[0].Value != 4 {
		t.Errorf("samples of one series: %+v, want 4 (one a push)", v)
	}
}

// receiver is a fake remote write endpoint answering with the statuses in order (the last
// one from then on), counting requests.
type receiver struct {
	statuses []int
	n        atomic.Int64
	hold     chan struct{} // when set, each request waits for it to close
	mu       sync.Mutex
	auth     []string
	body     string // answered with every status
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	i := int(r.n.Add(1)) - 1
	io.Copy(io.Discard, req.Body)
	r.mu.Lock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	r.mu.Unlock()
	if r.hold != nil {
		<-r.hold
	}
	st := r.statuses[min(i, len(r.statuses)-1)]
	w.WriteHeader(st)
	io.WriteString(w, r.body)
}

func TestRetriesAreBounded(t *testing.T) {
	cases := []struct {
		name      string
		statuses  []int
		requests  int64
		sent, bad int64
	}{
		{"5xx then accepted", []int{503, 500, 204}, 3, 1, 0},
		{"429 is retried", []int{429, 204}, 2, 1, 0},
		{"5xx for good: given up after the attempts", []int{503}, 3, 0, 1},
		{"4xx is not retried", []int{400}, 1, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := &receiver{statuses: tc.statuses}
			addr := loopback.Serve(t, rc, nil)
			reg, _, _ := testRegistry()
			p, err := remotewrite.Start(reg, remotewrite.Options{URL: "http://" + addr + "/api/v1/write", Attempts: 3, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			st := p.Stop(context.Background(), time.Now())
			if rc.n.Load() != tc.requests || st.Sent != tc.sent || st.Failed != tc.bad {
				t.Fatalf("%d requests, stats %+v; want %d requests, %d sent, %d failed", rc.n.Load(), st, tc.requests, tc.sent, tc.bad)
			}
			if tc.bad > 0 && !strings.Contains(st.LastErr, http.StatusText(tc.statuses[len(tc.statuses)-1])) {
				t.Errorf("last error %q does not say the status", st.LastErr)
			}
		})
	}
}

// A receiver that does not answer never holds up Push: the queue fills, later batches are
// dropped and counted, and Stop gives up at its flush deadline.
func TestStuckReceiverDropsNotBlocks(t *testing.T) {
	rc := &receiver{statuses: []int{204}, hold: make(chan struct{})}
	addr := loopback.Serve(t, rc, nil)
	defer close(rc.hold)
	reg, _, _ := testRegistry()
	p, err := remotewrite.Start(reg, remotewrite.Options{URL: "http://" + addr + "/w", QueueLen: 2, FlushTimeout: 200 * time.Millisecond, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		p.Push(time.Now())
	}
	// One batch is in flight (or about to be), two wait: at least 7 of 10 cannot have a place.
	if d := p.Stats().Dropped; d < 7 {
		t.Fatalf("dropped %d of 10 pushes to a stuck receiver, want at least 7", d)
	}
	st := p.Stop(context.Background(), time.Now())
	if st.Final || st.Sent != 0 || st.Dropped+st.Failed != 11 {
		t.Fatalf("stats %+v: want nothing sent, all 11 batches dropped or failed", st)
	}
}

// The URL's credentials go in the request only: as basic auth, never in URL() nor in an error,
// even when the receiver echoes them back.
func TestCredentialsStayOutOfOutputs(t *testing.T) {
	rc := &receiver{statuses: []int{401}, body: "bad credentials hunter2-secret for token s3cr3t-token-value"}
	addr := loopback.Serve(t, rc, nil)
	reg, _, _ := testRegistry()
	p, err := remotewrite.Start(reg, remotewrite.Options{URL: "http://alice:hunter2-secret@" + addr + "/w?token=s3cr3t-token-value"})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stop(context.Background(), time.Now())
	if rc.auth[0] != "Basic YWxpY2U6aHVudGVyMi1zZWNyZXQ=" {
		t.Errorf("Authorization %q, want basic auth from the URL's user-info", rc.auth[0])
	}
	for _, out := range []string{p.URL(), st.LastErr} {
		for _, secret := range []string{"hunter2-secret", "s3cr3t-token-value", "alice"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q shows %q", out, secret)
			}
		}
	}
	if !strings.Contains(st.LastErr, "401") {
		t.Errorf("last error %q does not say the status", st.LastErr)
	}
}

func TestBadSettings(t *testing.T) {
	reg, _, _ := testRegistry()
	cases := []struct {
		url    string
		labels map[string]string
		want   string
	}{
		{"http://192.0.2.1:9090/api/v1/write", nil, "not on a loopback address"},
		{"ftp://127.0.0.1/x", nil, "want an http:// or https:// URL"},
		{"http://u:pw-secret-1@[::1/x", nil, "parse"},
		{"http://127.0.0.1:9090/w", map[string]string{"group": "x"}, `"group" is one mcpchaos sets`},
	}
	for _, tc := range cases {
		_, err := remotewrite.Start(reg, remotewrite.Options{URL: tc.url, Labels: tc.labels})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw-secret-1") {
			t.Errorf("%s %v: error %v, want one saying %q, without the password", tc.url, tc.labels, err, tc.want)
		}
	}
}

// Push may race with Stop (a ticker that fires as the run ends): it is then a no-op, never a
// send on a closed queue; a second Stop returns the same stats.
func TestPushDuringStop(t *testing.T) {
	rc := &receiver{statuses: []int{204}}
	addr := loopback.Serve(t, rc, nil)
	reg, _, _ := testRegistry()
	p, err := remotewrite.Start(reg, remotewrite.Options{URL: "http://" + addr + "/w"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				p.Push(time.Now())
			}
		}
	})
	st := p.Stop(context.Background(), time.Now())
	close(stop)
	wg.Wait()
	if !st.Final || p.Stop(context.Background(), time.Now()) != p.Stats() {
		t.Fatalf("stats %+v: want the final values sent, and a second Stop to change nothing", st)
	}
}
