package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// urlWorkload is a small workload against the MCP endpoint at url, with the given extra target
// lines (headers...).
func urlWorkload(t *testing.T, url, extra string) *workloads.Workload {
	t.Helper()
	src := fmt.Sprintf(`name: contract
target:
  url: %s
  session_ttl: 300ms
%sphases:
  - {name: calls, duration: 600ms, calls: true}
groups:
  - {name: naive, clients: 1, policy: naive, call_every: 100ms, request_timeout: 1s}
`, url, extra)
	w, err := workloads.Parse("contract.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// failingObserver refuses to start.
type failingObserver struct{}

var errObserver = errors.New("the observer could not start")

func (failingObserver) Start(*View) error     { return errObserver }
func (failingObserver) Stop(*View, time.Time) {}

// Run's contract, as its doc states it: which errors come with an export and which without.
// Each case is the cheapest run that ends that way; the export, when there is one, says why.
func TestRunExportErrorContract(t *testing.T) {
	t.Parallel()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(refuse.Close)
	abortAtOnce, err := gate.ParseThreshold("naive.sessions_started < 1")
	if err != nil {
		t.Fatal(err)
	}
	abortAtOnce.AbortOnFail = true
	cases := []struct {
		name       string
		plan       func(t *testing.T) *Plan
		cancelled  bool
		opts       []Option
		wantErr    func(error) bool
		withExport bool
		runError   string // in the export's run.error (or run.aborted)
	}{
		{name: "ConfigError: a header variable is not set", plan: func(t *testing.T) *Plan {
			return mustPlan(t, urlWorkload(t, refuse.URL+"/mcp", "  headers: {Authorization: \"Bearer ${MCPCHAOS_CONTRACT_UNSET}\"}\n"))
		}, wantErr: isA[*ConfigError]},
		{name: "ErrInterrupted during set-up", plan: func(t *testing.T) *Plan { return mustPlan(t, tinyWorkload(t, "contract", 1)) },
			cancelled: true, wantErr: func(err error) bool { return errors.Is(err, ErrInterrupted) }},
		{name: "an observer that cannot start", plan: func(t *testing.T) *Plan { return mustPlan(t, tinyWorkload(t, "contract", 1)) },
			opts: []Option{WithObserver(failingObserver{})}, wantErr: func(err error) bool { return errors.Is(err, errObserver) }},
		{name: "a start time that passed during set-up", plan: func(t *testing.T) *Plan {
			return mustPlan(t, tinyWorkload(t, "contract", 1), WithStartAt(time.Now().Add(-time.Hour)))
		}, wantErr: func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "passed while this run was setting up")
		}},
		{name: "SetupError: the target refuses connections", plan: func(t *testing.T) *Plan {
			return mustPlan(t, urlWorkload(t, "http://"+closedPort(t)+"/mcp", ""))
		}, wantErr: isA[*SetupError], withExport: true, runError: "could not start"},
		{name: "SetupError: the target does not answer as an MCP server", plan: func(t *testing.T) *Plan {
			return mustPlan(t, urlWorkload(t, refuse.URL+"/mcp", ""))
		}, wantErr: isA[*SetupError], withExport: true, runError: "does not answer as an MCP server"},
		{name: "AbortError: an abort_on_fail threshold failed", plan: func(t *testing.T) *Plan {
			return mustPlan(t, tinyWorkload(t, "contract", 1), WithThresholds(abortAtOnce))
		}, wantErr: isA[*AbortError], withExport: true, runError: "naive.sessions_started < 1"},
		{name: "NotSteadyError: a before probe failed", plan: func(t *testing.T) *Plan {
			return mustPlan(t, steadyWorkload(t, "steady_state: {probes: [{name: up, when: before, http: {url: \"http://"+closedPort(t)+"/\"}}]}\n"))
		}, wantErr: isA[*NotSteadyError], withExport: true, runError: "not steady before the run"},
		{name: "RollbackError: a rollback failed", plan: func(t *testing.T) *Plan {
			return mustPlan(t, steadyWorkload(t, "rollbacks: [{exec: {command: sh, args: [-c, 'exit 2']}}]\n"))
		}, wantErr: isA[*RollbackError], withExport: true},
		{name: "ConfigError: a rollback's variable is not set", plan: func(t *testing.T) *Plan {
			return mustPlan(t, steadyWorkload(t, "rollbacks: [{exec: {command: sh, env: {T: \"${MCPCHAOS_CONTRACT_UNSET}\"}}}]\n"))
		}, wantErr: isA[*ConfigError]},
		{name: "MeasureError: every tool call got a broken reply", plan: func(t *testing.T) *Plan {
			w, err := workloads.Parse("broken.yaml", fmt.Appendf(nil, `name: broken
target: {url: %s}
phases:
  - {name: calls, duration: 600ms, calls: true}
groups:
  - {name: probe, clients: 1, policy: probe, call_every: 100ms, retries: 1, retry_backoff: 10ms, tool: lookup_order, arguments: {order_id: "a", quantity: 1}}
`, brokenCalls(t)))
			if err != nil {
				t.Fatal(err)
			}
			return mustPlan(t, w)
		}, wantErr: isA[*MeasureError], withExport: true, runError: "the server broke the protocol"},
		{name: "PanicError: a goroutine of the run panicked", plan: func(t *testing.T) *Plan { return mustPlan(t, tinyWorkload(t, "contract", 1)) },
			opts: []Option{WithObserver(panicky{})}, wantErr: isA[*PanicError], withExport: true, runError: "panic in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancelled {
				cancel()
			}
			exp, err := Run(ctx, c.plan(t), append([]Option{WithStderr(testWriter{t})}, c.opts...)...)
			if !c.wantErr(err) {
				t.Fatalf("Run returned %T %v", err, err)
			}
			if (exp != nil) != c.withExport {
				t.Fatalf("export %v with %T, want an export: %v", exp != nil, err, c.withExport)
			}
			if exp != nil && !strings.Contains(exp.Run.Error+exp.Run.Aborted, c.runError) {
				t.Errorf("run.error %q, run.aborted %q: want %q", exp.Run.Error, exp.Run.Aborted, c.runError)
			}
		})
	}
}

// brokenCalls is a real MCP server (mcp-go) whose every tools/call is answered with a body
// that is not an MCP reply; it returns the endpoint's URL.
func brokenCalls(t *testing.T) string {
	srv := peers.MCPGo(t, peers.Options{})
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	addr := loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("Content-Type", "text/plain")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}), nil)
	return "http://" + addr + target.Path
}

func isA[E error](err error) bool {
	var e E
	return errors.As(err, &e)
}

func mustPlan(t *testing.T, w *workloads.Workload, opts ...PlanOption) *Plan {
	t.Helper()
	p, err := NewPlan(w, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
