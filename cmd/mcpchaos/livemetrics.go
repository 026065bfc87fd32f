package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpchaos/mcpchaos/metrics"
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

// serveMetrics serves the recorders' live numbers in the Prometheus text format at /metrics
// on addr until the returned stop is called. believed may be nil.
func serveMetrics(addr string, recs []*metrics.Recorder, believed func(int) int64, labels prometheus.Labels) (bound string, stop func(), err error) {
	reg := prometheus.NewRegistry()
	if err := prometheus.WrapRegistererWith(labels, reg).Register(metrics.NewCollector(recs, believed)); err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "mcpchaos live metrics: /metrics")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "mcpchaos: live metrics:", err)
		}
	}()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}, nil
}
