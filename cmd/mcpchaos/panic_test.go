package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

const panicWorkload = `name: panicky
target:
  builtin:
    session_ttl: 2s
phases:
  - {name: active, duration: 1500ms, calls: true}
groups:
  - {name: naive, policy: naive, clients: 2, call_every: 30ms}
  - {name: probe, policy: probe, probe: ping, clients: 2, call_every: 30ms}
faults:
  - {name: slow, toxic: latency, attributes: {latency: 5}, at: 1s, for: 200ms}
`

// A panic in a goroutine the tool owns (a client, a fleet's scheduler, the fault schedule) is
// recovered there: the run stops, the proxies on an external toxiproxy-server are removed, the
// export is written with the panic in run.error, and the exit status is 1. Not parallel: the
// hook that injects the panic is global.
func TestPanicInAGoroutine(t *testing.T) {
	api := toxiproxytest.Start(t)
	for _, where := range []string{"client", "fleet scheduler", "fault schedule"} {
		t.Run(strings.ReplaceAll(where, " ", "_"), func(t *testing.T) {
			w, err := workloads.Parse("panicky.yaml", []byte(panicWorkload))
			if err != nil {
				t.Fatal(err)
			}
			w.Toxiproxy = api
			var fired atomic.Bool
			guard.SetHook(func(at string) {
				if at == where && fired.CompareAndSwap(false, true) {
					panic("injected by the test")
				}
			})
			defer guard.SetHook(nil)
			out := filepath.Join(t.TempDir(), "r.json")
			runErr := run(context.Background(), w, runFlags{out: out, progress: "off", quiet: true, formats: "none"}, io.Discard, io.Discard)
			if !fired.Load() {
				t.Fatalf("the hook never ran at %q", where)
			}
			if runErr == nil || exitCode(runErr) != exitRuntime || !strings.Contains(runErr.Error(), "panic in "+where) {
				t.Fatalf("run returned %v (exit %d), want the panic in %s, exit 1", runErr, exitCode(runErr), where)
			}
			exp, err := results.ReadFile(out)
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			if !strings.Contains(exp.Run.Error, "panic in "+where) {
				t.Errorf("run.error = %q, want the panic", exp.Run.Error)
			}
			if exp.Run.End.Sub(exp.Run.Start).Seconds() >= 1.5 {
				t.Errorf("the run went on to its planned end after the panic")
			}
			proxies, err := toxiproxy.NewClient(api).Proxies()
			if err != nil {
				t.Fatal(err)
			}
			for name := range proxies {
				t.Errorf("proxy %s left on the toxiproxy-server", name)
			}
		})
	}
}
