package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/promtest"
	"github.com/mcpchaos/mcpchaos/results"
)

// A promql probe on the run's own live metrics (--metrics-addr), scraped by a real Prometheus:
// the after probes read what the run served. One holds (tool calls succeeded, none was
// misattributed in the probe group) and one is set to fail, so the run exits 99 and names it.
// The queries take the maximum over the last minute: a scrape that timed out on a loaded machine
// marks the series stale, and an instant query of a stale series returns nothing. The first
// two retry until Prometheus has scraped the run (the run serves its metrics until its after
// probes are done); set-to-fail runs once, after them.
func TestPromQLProbeOnTheRunsOwnMetrics(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mcpchaos") // the test binary as mcpchaos, put on PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	prom := promtest.Start(t, promtest.Options{Targets: []string{addr}, ScrapeInterval: time.Second})
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	os.WriteFile(wl, []byte(fmt.Sprintf(`name: promself
target:
  builtin: {session_ttl: 5s, notify_interval: 50ms, retry: 20ms}
phases:
  - {name: active, duration: 6s, calls: true}
groups:
  - {name: probe, policy: probe, probe: ping, clients: 2, call_every: 50ms}
faults:
  - {name: cut, toxic: idle_timeout, attributes: {timeout: 40}, at: 1s, for: 1s}
steady_state:
  probes:
    - name: calls-answered
      when: after
      retries: 60
      retry_interval: 500ms
      promql: {url: %[1]q, query: 'sum(max_over_time(mcpchaos_tool_calls_ok_total{group="probe"}[1m]))'}
      tolerance: value >= 1
    - name: nothing-misattributed
      when: after
      retries: 60
      retry_interval: 500ms
      promql: {url: %[1]q, query: 'sum(max_over_time(mcpchaos_misattributed_errors_total{group="probe"}[1m]))'}
      tolerance: value == 0
    - name: set-to-fail
      when: after
      promql: {url: %[1]q, query: 'sum(max_over_time(mcpchaos_tool_calls_ok_total{group="probe"}[1m]))'}
      tolerance: value < 1
`, prom.URL)), 0o644)
	out := filepath.Join(dir, "r.json")
	cmd := exec.Command(bin, "run", wl, "--metrics-addr", addr, "--metrics-linger", "0", "--progress", "off", "--out", out)
	stdout, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitThresholds {
		t.Fatalf("exit %v, want 99:\n%s", err, stdout)
	}
	if !strings.Contains(string(stdout), "not steady: 1 steady-state probe failed: set-to-fail (after") {
		t.Errorf("the output does not name the failed probe:\n%s", stdout)
	}
	exp, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ok := exp.Group("probe").Counters["tool_calls_ok"]
	for _, p := range exp.SteadyState.Probes {
		if len(p.Runs) != 1 || p.Runs[0].Value == nil {
			t.Fatalf("probe %s observed nothing: %+v", p.Name, p)
		}
		v := *p.Runs[0].Value
		switch p.Name {
		case "calls-answered", "set-to-fail":
			if p.Name == "set-to-fail" && (p.Verdict != results.ProbeFail || !strings.Contains(p.Runs[0].Why, "is not < 1")) {
				t.Errorf("set-to-fail: %+v", p.Runs[0])
			}
			// Prometheus saw the run's counter as its last scrape (a second at most before the end) left it:
			// at least one call, at most what the export counts.
			if v < 1 || v > float64(ok) {
				t.Errorf("%s read %v tool calls; the export counts %d", p.Name, v, ok)
			}
		case "nothing-misattributed":
			if v != 0 || p.Verdict != results.ProbePass {
				t.Errorf("%s: %+v", p.Name, p.Runs[0])
			}
		}
	}
}
