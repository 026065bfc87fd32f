package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// checkMetricsAddr checks --metrics-addr: HOST:PORT, on loopback unless public.
func checkMetricsAddr(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--metrics-addr %q: %v (want HOST:PORT, e.g. 127.0.0.1:9464)", addr, err)
	}
	if ip := net.ParseIP(host); !public && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return usagef("--metrics-addr %q is not a loopback address; pass --metrics-public to serve the metrics there", addr)
	}
	return nil
}

// liveMetrics is the --metrics-addr endpoint of one run: the groups' numbers and the run's
// state, every series labelled with the run's id, workload (and shard).
type liveMetrics struct {
	bound string
	srv   *http.Server
	done  chan struct{}

	finished atomic.Bool
	scraped  chan struct{} // closed by the first scrape after the run finished
	once     sync.Once
}

// serveMetrics serves the collectors in the Prometheus text format at /metrics on addr, each
// series with labels added, until close.
func serveMetrics(addr string, labels prometheus.Labels, cs ...prometheus.Collector) (*liveMetrics, error) {
	reg := prometheus.NewRegistry()
	wrapped := prometheus.WrapRegistererWith(labels, reg)
	for _, c := range cs {
		if err := wrapped.Register(c); err != nil {
			return nil, err
		}
	}
	lm := &liveMetrics{done: make(chan struct{}), scraped: make(chan struct{})}
	prom := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		final := lm.finished.Load()
		prom.ServeHTTP(w, r)
		if final { // this scrape read the final numbers
			lm.once.Do(func() { close(lm.scraped) })
		}
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "mcpchaos live metrics: /metrics")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	lm.bound = ln.Addr().String()
	lm.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(lm.done)
		if err := lm.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "mcpchaos: live metrics:", err)
		}
	}()
	return lm, nil
}

// finish marks the numbers final (mcpchaos_run_finished 1).
func (lm *liveMetrics) finish() { lm.finished.Store(true) }

// linger keeps serving the final numbers until one scrape has read them, linger has passed,
// or ctx ends (a signal), whichever comes first; then closes.
func (lm *liveMetrics) linger(ctx context.Context, linger time.Duration) {
	lm.finish()
	if linger > 0 {
		t := time.NewTimer(linger)
		defer t.Stop()
		select {
		case <-lm.scraped:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	lm.close()
}

func (lm *liveMetrics) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lm.srv.Shutdown(ctx)
	<-lm.done
}
