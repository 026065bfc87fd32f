package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/promtest"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// steadyWorkload is a short run against the reference server: one probe group, a stream cut
// from 300ms to 900ms, and the extra YAML (steady_state, rollbacks) appended.
func steadyWorkload(t *testing.T, extra string) *workloads.Workload {
	t.Helper()
	src := `name: steady
target:
  builtin: {session_ttl: 5s, notify_interval: 50ms, retry: 20ms}
phases:
  - {name: active, duration: 1500ms, calls: true}
groups:
  - {name: probe, policy: probe, probe: ping, clients: 2, call_every: 50ms}
faults:
  - {name: cut, toxic: idle_timeout, attributes: {timeout: 40}, at: 300ms, for: 600ms}
` + extra
	w, err := workloads.Parse("steady.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// markRollback is a rollback that writes a file, so that a test sees it ran.
func markRollback(t *testing.T) (yaml, path string) {
	path = filepath.Join(t.TempDir(), "rolled-back")
	return fmt.Sprintf(`rollbacks:
  - name: mark
    exec: {command: sh, args: [-c, "echo done >> %s"], timeout: 10s}
`, path), path
}

func rolledBack(t *testing.T, exp *results.Export, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "done\n" {
		t.Errorf("the rollback did not run exactly once: %q, %v", b, err)
	}
	if exp == nil {
		return
	}
	if len(exp.Rollbacks) != 1 || exp.Rollbacks[0].Action != "mark" || exp.Rollbacks[0].Error != "" {
		t.Errorf("export rollbacks = %+v, want mark, passed", exp.Rollbacks)
	}
}

// A gauge served on loopback, scraped by a real Prometheus: the team's server's own metric.
type gaugeTarget struct {
	g    prometheus.Gauge
	prom *promtest.Server
}

func startGauge(t *testing.T, v float64) *gaugeTarget {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "staging_sessions_held", Help: "sessions the server holds"})
	g.Set(v)
	reg.MustRegister(g)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	prom := promtest.Start(t, promtest.Options{Targets: []string{strings.TrimPrefix(srv.URL, "http://")}})
	prom.WaitFor(t, fmt.Sprintf("staging_sessions_held == %g", v), 60*time.Second)
	return &gaugeTarget{g: g, prom: prom}
}

// The steady-state hypothesis against a real Prometheus: a before probe outside its tolerance
// means the system is not steady: the run starts no fault and no client, says which probe, and
// still rolls back. Once the metric is back within bounds, the same workload runs, and its after
// probe is judged against its own before value.
func TestSteadyStateBeforeGatesTheRun(t *testing.T) {
	t.Parallel()
	gt := startGauge(t, 10)
	rb, mark := markRollback(t)
	w := steadyWorkload(t, fmt.Sprintf(`steady_state:
  title: no leaked sessions
  probes:
    - name: sessions-held
      when: [before]
      promql: {url: %q, query: sum(staging_sessions_held)}
      tolerance: value <= 5
    - name: sessions-stable
      when: [before, after]
      promql: {url: %q, query: sum(staging_sessions_held)}
      tolerance: within 10%% of before
`, gt.prom.URL, gt.prom.URL)+rb)
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	var nse *NotSteadyError
	if !errors.As(err, &nse) || exp == nil {
		t.Fatalf("Run returned %v (export %v), want a *NotSteadyError with an export", err, exp != nil)
	}
	if len(nse.Probes) != 1 || !strings.Contains(nse.Probes[0], "sessions-held") || !strings.Contains(nse.Probes[0], "10 is not <= 5") {
		t.Errorf("NotSteadyError names %q, want the probe sessions-held and its value", nse.Probes)
	}
	s := exp.SteadyState
	if s == nil || s.Verdict != results.NotSteadyBefore {
		t.Fatalf("steady_state = %+v, want not steady before", s)
	}
	if len(exp.Faults) != 0 || exp.Overall.Counters["sessions_started"] != 0 {
		t.Errorf("a run that was not steady started faults %v or sessions %d", exp.Faults, exp.Overall.Counters["sessions_started"])
	}
	if !strings.Contains(exp.Run.Error, "not steady before the run") {
		t.Errorf("run.error = %q", exp.Run.Error)
	}
	rolledBack(t, exp, mark)

	gt.g.Set(3)
	gt.prom.WaitFor(t, "staging_sessions_held == 3", 60*time.Second)
	os.Remove(mark)
	exp, err = Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil {
		t.Fatalf("a steady run returned %v", err)
	}
	if s := exp.SteadyState; !s.IsSteady() || s.Probes[1].Verdict != results.ProbePass || len(s.Probes[1].Runs) != 2 {
		t.Fatalf("steady_state = %+v, want steady, sessions-stable run before and after", s)
	}
	before, after := exp.SteadyState.Probes[1].Runs[0], exp.SteadyState.Probes[1].Runs[1]
	if before.When != "before" || before.AtS >= 0 || after.When != "after" || after.AtS < exp.Run.PlannedSeconds || *after.Value != 3 {
		t.Errorf("runs = %+v, %+v: want before at a negative offset, after past the run's end, value 3", before, after)
	}
	rolledBack(t, exp, mark)
}

// Continuously and during a fault: the runs fall in their windows, and a probe that fails in
// one of them fails the steady state (and only that probe).
func TestSteadyStateWhileRunning(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky" && failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, `{"sessions": {"held": 2}}`)
	}))
	defer srv.Close()
	failing.Store(true)
	w := steadyWorkload(t, fmt.Sprintf(`steady_state:
  probes:
    - name: all-along
      when: continuously
      every: 200ms
      http: {url: %q, json_field: sessions.held}
      tolerance: value <= 2
    - name: in-the-cut
      when: during
      during: cut
      every: 200ms
      http: {url: %q}
    - name: healthz
      when: [before, after]
      http: {url: "{{target}}/healthz", body_contains: ok}
`, srv.URL+"/ok", srv.URL+"/flaky"))
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil {
		t.Fatalf("Run returned %v", err)
	}
	s := exp.SteadyState
	if s.IsSteady() {
		t.Fatal("steady, though in-the-cut failed")
	}
	verdicts := map[string]string{}
	for _, p := range s.Probes {
		verdicts[p.Name] = p.Verdict
		for _, r := range p.Runs {
			switch {
			case p.Name == "all-along" && (r.AtS < 0 || *r.Value != 2):
				t.Errorf("all-along ran at %.3fs with %v", r.AtS, r.Value)
			case p.Name == "in-the-cut" && (r.AtS < 0.3 || r.Pass || !strings.Contains(r.Why, "status 503, want 200")):
				t.Errorf("in-the-cut ran at %.3fs (the cut is 0.3s-0.9s): %+v", r.AtS, r)
			}
		}
	}
	want := map[string]string{"all-along": "pass", "in-the-cut": "fail", "healthz": "pass"}
	for k, v := range want {
		if verdicts[k] != v {
			t.Errorf("verdicts = %v, want %v", verdicts, want)
			break
		}
	}
	if fp := exp.FailedProbes(); len(fp) != 1 || !strings.HasPrefix(fp[0], "in-the-cut (during") {
		t.Errorf("FailedProbes = %q", fp)
	}
}

// The rollbacks run at the end of every run, however it ended: completed, could not start,
// aborted by a threshold, interrupted.
func TestRollbacksRunOnEveryExit(t *testing.T) {
	t.Parallel()
	closed := closedAddr(t)
	cases := []struct {
		name  string
		edit  func(*workloads.Workload)
		opts  func(context.CancelFunc) ([]PlanOption, []Option)
		check func(error) bool
	}{
		{"completed", nil, nil, func(err error) bool { return err == nil }},
		{"could-not-start", func(w *workloads.Workload) {
			w.Target = workloads.Target{URL: "http://" + closed + "/mcp", SessionTTL: 5 * time.Second}
		}, nil, func(err error) bool { var se *SetupError; return errors.As(err, &se) }},
		{"aborted", nil, func(context.CancelFunc) ([]PlanOption, []Option) {
			th := mustThreshold(t, "overall.tool_calls_ok < 1")
			th.AbortOnFail = true
			return []PlanOption{WithThresholds(th)}, nil
		}, func(err error) bool { var ae *AbortError; return errors.As(err, &ae) }},
		{"interrupted", nil, func(cancel context.CancelFunc) ([]PlanOption, []Option) {
			return nil, []Option{WithObserver(&interruptWhen{cond: callsOK, cancel: cancel})}
		}, func(err error) bool { return errors.Is(err, ErrInterrupted) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rb, mark := markRollback(t)
			w := steadyWorkload(t, rb)
			if c.edit != nil {
				c.edit(w)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var popts []PlanOption
			opts := []Option{WithStderr(testWriter{t})}
			if c.opts != nil {
				p, o := c.opts(cancel)
				popts, opts = p, append(opts, o...)
			}
			exp, err := Run(ctx, mustPlan(t, w, popts...), opts...)
			if !c.check(err) {
				t.Fatalf("Run returned %v", err)
			}
			rolledBack(t, exp, mark)
		})
	}
}

// A rollback that fails is bounded by its own timeout, recorded with its outcome, and turns a
// run that went well into a *RollbackError; the rollbacks after it still run.
func TestRollbackFailure(t *testing.T) {
	t.Parallel()
	closed := closedAddr(t)
	rb, mark := markRollback(t)
	w := steadyWorkload(t, fmt.Sprintf(`rollbacks:
  - name: ready
    wait_for: {url: "http://%s/healthz", timeout: 300ms, interval: 50ms}
  - remove_faults: {faults: [cut]}
%s`, closed, strings.TrimPrefix(rb, "rollbacks:\n")))
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	var rbe *RollbackError
	if !errors.As(err, &rbe) || len(rbe.Failed) != 1 || !strings.HasPrefix(rbe.Failed[0], "ready: ") {
		t.Fatalf("Run returned %v, want a *RollbackError naming ready", err)
	}
	if len(exp.Rollbacks) != 3 {
		t.Fatalf("rollbacks = %+v", exp.Rollbacks)
	}
	ready, removed := exp.Rollbacks[0], exp.Rollbacks[1]
	if ready.Error == "" || !strings.Contains(ready.Error, "not ready within 300ms") || ready.EndedAtS-ready.StartedAtS > 10 {
		t.Errorf("wait_for rollback = %+v", ready)
	}
	if removed.Kind != "remove_faults" || removed.Error != "" || removed.Detail != "removed 0 toxics (1 were already off)" {
		t.Errorf("remove_faults rollback = %+v (the schedule removed the cut at its end)", removed)
	}
	if exp.Rollbacks[2].Action != "mark" || exp.FailedRollbacks()[0] != rbe.Failed[0] {
		t.Errorf("rollbacks = %+v", exp.Rollbacks)
	}
	if b, _ := os.ReadFile(mark); string(b) != "done\n" {
		t.Errorf("the rollback after the failed one did not run")
	}
}

// closedAddr is a loopback address where no HTTP server answers: it accepts each connection
// and closes it at once, until the test ends. (A port listened on and closed was free for
// any parallel test's server to take: on a busy suite one answered the rollback's /healthz.)
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func mustThreshold(t *testing.T, expr string) gate.Threshold {
	t.Helper()
	th, err := gate.ParseThreshold(expr)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// The example in workloads/examples validates and runs: steady before, during and after its
// fault, and rolled back.
func TestSteadyStateExample(t *testing.T) {
	t.Parallel()
	w, err := workloads.Load(filepath.Join("..", "workloads", "examples", "steady-state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil {
		t.Fatalf("Run returned %v", err)
	}
	s := exp.SteadyState
	if !s.IsSteady() || len(s.Probes) != 3 {
		t.Fatalf("steady_state = %+v", s)
	}
	for _, p := range s.Probes {
		if p.Verdict != results.ProbePass {
			t.Errorf("probe %s: %s", p.Name, p.Verdict)
		}
	}
	if len(exp.Rollbacks) != 2 || exp.Rollbacks[0].Output != "rolled back\n" || exp.Rollbacks[1].Kind != "remove_faults" {
		t.Errorf("rollbacks = %+v", exp.Rollbacks)
	}
}

// A probe with retries makes more attempts before a run fails, and says which one passed; one
// that never passes fails after its last.
func TestSteadyProbeRetries(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/settles" && n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		if r.URL.Path == "/never" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	w := steadyWorkload(t, fmt.Sprintf(`steady_state:
  probes:
    - name: settles
      when: after
      retries: 5
      retry_interval: 10ms
      http: {url: %q}
    - name: never
      when: after
      retries: 2
      retry_interval: 10ms
      http: {url: %q}
`, srv.URL+"/settles", srv.URL+"/never"))
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil {
		t.Fatalf("Run returned %v", err)
	}
	settles, never := exp.SteadyState.Probes[0], exp.SteadyState.Probes[1]
	if settles.Verdict != results.ProbePass || len(settles.Runs) != 1 || settles.Runs[0].Detail != "status 200 (attempt 3 of 6)" {
		t.Errorf("settles: %+v", settles)
	}
	if never.Verdict != results.ProbeFail || len(never.Runs) != 1 || never.Runs[0].Detail != "status 503 (attempt 3 of 3)" {
		t.Errorf("never: %+v", never)
	}
}

// A rollback's verdict is what its command did, even when a process it started keeps its
// output open (a daemon, a background sleep): exit 0, its output, no error; the process is
// ended with its group when the run ends, and the export's notes say so (issue 30: it was
// "did not run", and the child outlived the run).
func TestRollbackWhoseChildHoldsItsOutput(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	w := steadyWorkload(t, fmt.Sprintf(`rollbacks:
  - name: deploy
    exec: {command: sh, args: [-c, "sleep 300 & echo $! > %s; echo rolled back; exit 0"], timeout: 1m}
`, pidFile))
	exp, err := Run(context.Background(), mustPlan(t, w), WithStderr(testWriter{t}))
	if err != nil || exp == nil || len(exp.Rollbacks) != 1 {
		t.Fatalf("Run: %v, rollbacks %+v", err, exp)
	}
	rb := exp.Rollbacks[0]
	if rb.Error != "" || rb.ExitStatus == nil || *rb.ExitStatus != 0 || !strings.HasPrefix(rb.Detail, "sh exited 0") || rb.Output != "rolled back\n" {
		t.Errorf("rollback %+v: want exited 0 with its output, no error", rb)
	}
	if !slices.ContainsFunc(exp.Run.Notes, func(n string) bool { return strings.Contains(n, "exec sh: processes it started were still running") }) {
		t.Errorf("notes %q: want one saying the rollback's group was ended", exp.Run.Notes)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child's exit, as the kernel reports it (a pidfd turns readable), within a bound
	// far past what a SIGKILL takes: no sleep, no guess.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // already gone and reaped
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 30_000); err != nil || n != 1 {
		_ = syscall.Kill(pid, syscall.SIGKILL) // the test's own leftover
		t.Errorf("the rollback's child %d still runs after the run ended (poll %d, %v)", pid, n, err)
	}
}
