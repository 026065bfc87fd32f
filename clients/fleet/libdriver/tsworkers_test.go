package libdriver_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/tsworker"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// A node worker that dies while the run goes on is a problem of the run, and its clients'
// calls fail at once: nothing waits for a worker that is gone, and the group still ends.
func TestTSWorkerDeathIsAProblemNotAHang(t *testing.T) {
	if err := tsworker.Check(policy.ClientTSSDK); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	ep := &wire.Endpoint{URL: inst.URL, HTTP: &http.Client{Transport: wire.Streaming(wire.NewTransport(16))},
		Protocol: wire.Protocol20251125, RequestTimeout: 5 * time.Second, MaxBody: 1 << 20, MaxEvent: 64 << 10, ClientName: "test"}
	rec := metrics.NewRecorder("ts", policy.ClientTSSDK, 3)
	f := fleet.New(fleet.GroupConfig{Name: "ts", Clients: 3, DeadStatuses: []int{404}, CallEvery: 50 * time.Millisecond,
		Tool: "echo", Arguments: map[string]any{"text": "x"}, Kind: policy.ClientTSSDK}, ep, rec,
		truth.Func(inst.DeathTime), func(time.Duration) bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	pids := f.WorkerPIDs()
	if len(pids) != 1 {
		t.Fatalf("worker pids %v, want one worker for 3 clients", pids)
	}
	done := make(chan struct{})
	go func() { f.Run(ctx, time.Now()); close(done) }()
	waitFor(t, "calls answered through the worker", func() bool { return rec.Get(metrics.ToolCallsOK) >= 3 })
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil { // the worker this test's fleet started
		t.Fatal(err)
	}
	waitFor(t, "the worker's death reported", func() bool {
		return strings.Contains(strings.Join(fleet.ProblemsOf([]*fleet.Fleet{f}, false), "\n"), "node worker")
	})
	okBefore := rec.Get(metrics.ToolCallsOK)
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the group did not end within a minute of its worker's death")
	}
	if rec.Get(metrics.ToolCallsOK) > okBefore+3 {
		t.Errorf("calls kept succeeding after the worker died: %d, then %d", okBefore, rec.Get(metrics.ToolCallsOK))
	}
	t.Log(fleet.ProblemsOf([]*fleet.Fleet{f}, false))
}

// waitFor polls cond (a bounded poll of counters, not a synchronisation by sleep).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, still waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
