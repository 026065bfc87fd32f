package refserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Path is where Start serves the MCP endpoint.
const Path = "/mcp"

// Instance is a Server listening on a real address, for `mcpchaos serve`
// and for tests.
type Instance struct {
	URL    string  // the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
	Addr   string  // the address listened on, e.g. 127.0.0.1:PORT
	Server *Server // the lone server; nil when Cluster serves
	// Cluster is the replicas and their router, when started by StartCluster.
	Cluster *Cluster

	http      *http.Server
	metrics   http.Handler // MetricsPath (metrics.go)
	served    chan error
	closeOnce sync.Once
	closeErr  error
}

// Start listens on addr (e.g. "127.0.0.1:0"), serves a Server for cfg at
// Path, and returns once it is listening.
func Start(addr string, cfg Config) (*Instance, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("target: listen on %s: %w", addr, err)
	}
	srv := New(cfg)
	return listenAndServe(ln, &Instance{Server: srv}, srv), nil
}

// StartCluster is Start for a Cluster of topo: the router listens on addr.
func StartCluster(addr string, cfg Config, topo Topology) (*Instance, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("target: listen on %s: %w", addr, err)
	}
	c, err := NewCluster(cfg, topo)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return listenAndServe(ln, &Instance{Cluster: c}, c), nil
}

// StartTopology is Start for the lone server topo describes by default (one replica, sticky,
// its own event log), else StartCluster: replicas behind a router (release.go).
func StartTopology(addr string, cfg Config, topo Topology) (*Instance, error) {
	if topo != (Topology{Replicas: 1, Routing: RouteSticky, EventLog: LogPerReplica}) {
		return StartCluster(addr, cfg, topo)
	}
	return Start(addr, cfg)
}

// ServeMetrics serves the instance's metrics (MetricsPath) at addr too, until ctx ends, and
// returns the address it listens on.
func (i *Instance) ServeMetrics(ctx context.Context, addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, i.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return ln.Addr(), nil
}

// HealthPath answers 200 while the instance serves: what a readiness check
// (a workload's wait_for, a Kubernetes probe) asks.
const HealthPath = "/healthz"

func listenAndServe(ln net.Listener, inst *Instance, h http.Handler) *Instance {
	codes := new(statusCounts)
	inst.metrics = metricsHandler(inst, codes)
	mux := http.NewServeMux()
	mux.Handle(Path, counted(h, codes))
	mux.Handle(MetricsPath, inst.metrics)
	mux.Handle(SessionsPath, sessionsJSON(inst))
	mux.HandleFunc(HealthPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	inst.URL = "http://" + ln.Addr().String() + Path
	inst.Addr = ln.Addr().String()
	inst.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	inst.served = make(chan error, 1)
	go func() { inst.served <- inst.http.Serve(ln) }()
	return inst
}

// DeathTime is the truth about the served sessions' deaths.
func (i *Instance) DeathTime(sessionID string) (time.Time, bool) {
	if i.Cluster != nil {
		return i.Cluster.DeathTime(sessionID)
	}
	return i.Server.DeathTime(sessionID)
}

// Stats are the counters of the server, or of the cluster's replicas.
func (i *Instance) Stats() Stats {
	if i.Cluster != nil {
		return i.Cluster.Stats()
	}
	return i.Server.Stats()
}

// MetricsHandler serves the instance's Prometheus metrics (metrics.go), as MetricsPath does;
// `mcpchaos serve --metrics-addr` serves it on an address of its own too.
func (i *Instance) MetricsHandler() http.Handler { return i.metrics }

// config is the configuration of the server, or of the cluster's replicas.
func (i *Instance) config() Config {
	if i.Cluster != nil {
		return i.Cluster.cfg
	}
	return i.Server.cfg
}

// logSize is what the event logs keep, over the cluster's distinct log stores.
func (i *Instance) logSize() logSize {
	if i.Cluster != nil {
		return i.Cluster.logSize()
	}
	return i.Server.logs.size()
}

// RunTwice says which tool calls the server (or cluster) ran more than once.
func (i *Instance) RunTwice() RunTwice {
	if i.Cluster != nil {
		return i.Cluster.RunTwice()
	}
	return i.Server.RunTwice()
}

// shutdownGrace bounds how long Close waits for requests in flight.
const shutdownGrace = 2 * time.Second

// Close ends open streams, then shuts the listener down, waiting at most
// shutdownGrace for requests in flight. It is idempotent.
func (i *Instance) Close() error {
	i.closeOnce.Do(func() {
		// Streams and slow tools end first, so Shutdown need not wait for them.
		if i.Cluster != nil {
			i.Cluster.Close()
		} else {
			i.Server.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := i.http.Shutdown(ctx); err != nil {
			i.closeErr = fmt.Errorf("target: shutdown %s: %w", i.Addr, err)
			_ = i.http.Close()
		}
		if err := <-i.served; !errors.Is(err, http.ErrServerClosed) {
			i.closeErr = errors.Join(i.closeErr, fmt.Errorf("target: serve %s: %w", i.Addr, err))
		}
	})
	return i.closeErr
}
