package prom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Endpoint serves a run's live numbers to Prometheus (run --metrics-addr): the collectors
// given to Serve (the groups' numbers, the run's state), every series labelled alike (the
// run's id, workload and shard), until the run is over and one scrape has read the final
// numbers.
type Endpoint struct {
	bound  string
	srv    *http.Server
	done   chan struct{}
	served error // why the server stopped serving before Close, if it did

	finished atomic.Bool
	scraped  chan struct{} // closed by the first scrape after the run finished
	once     sync.Once
}

// Serve serves the collectors in the Prometheus text format at /metrics on addr, each series
// with labels added, until Close.
func Serve(addr string, labels prometheus.Labels, cs ...prometheus.Collector) (*Endpoint, error) {
	reg := prometheus.NewRegistry()
	wrapped := prometheus.WrapRegistererWith(labels, reg)
	for _, c := range cs {
		if err := wrapped.Register(c); err != nil {
			return nil, err
		}
	}
	lm := &Endpoint{done: make(chan struct{}), scraped: make(chan struct{})}
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
		return nil, err
	}
	lm.bound = ln.Addr().String()
	lm.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(lm.done)
		if err := lm.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			lm.served = err
		}
	}()
	return lm, nil
}

// Addr is the address the endpoint listens on (addr as bound: port 0 chosen).
func (lm *Endpoint) Addr() string { return lm.bound }

// Finish marks the numbers final (mcpchaos_run_finished 1).
func (lm *Endpoint) Finish() { lm.finished.Store(true) }

// Linger keeps serving the final numbers until one scrape has read them, linger has passed,
// or ctx ends (a signal), whichever comes first; then closes.
func (lm *Endpoint) Linger(ctx context.Context, linger time.Duration) error {
	lm.Finish()
	if linger > 0 {
		t := time.NewTimer(linger)
		defer t.Stop()
		select {
		case <-lm.scraped:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return lm.Close()
}

// Close stops serving (waiting at most 2 s for scrapes under way) and says why the server
// had stopped on its own before, if it had.
func (lm *Endpoint) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = lm.srv.Shutdown(ctx)
	<-lm.done
	return lm.served
}
