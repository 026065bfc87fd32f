package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// readyAfter is an http.RoundTripper that answers 503 to the first n requests and 200 after:
// a service coming back, with no socket (synctest's fake clock only moves when nothing waits
// on the network).
type readyAfter struct{ n, seen int }

func (r *readyAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	r.seen++
	status := http.StatusServiceUnavailable
	if r.seen > r.n {
		status = http.StatusOK
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// Rollbacks on synctest's fake clock: an interrupted run is rolled back all the same, one
// rollback after another, each wait_for polling at its interval and bounded by its own
// timeout; their times in the export count from the run's start.
func TestRollbacksOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		waitFor := func(rt http.RoundTripper) faults.WaitFor {
			return faults.WaitFor{URL: "http://staging.test/ready", Client: &http.Client{Transport: rt},
				Timeout: 5 * time.Second, Interval: 400 * time.Millisecond}
		}
		var stderr strings.Builder
		r := &runner{opts: runOptions{stderr: &stderr}, rollbacksReady: true, rollbacks: []rollbackPlan{
			{name: "comes-back", kind: workloads.ActionWaitFor, action: waitFor(&readyAfter{n: 2})},
			{name: "never", kind: workloads.ActionWaitFor, action: waitFor(&readyAfter{n: 1 << 30})},
		}}
		r.began = time.Now()
		time.Sleep(3 * time.Second) // the run went on for 3s, then was interrupted
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		exp, err := r.rollBack(ctx, &results.Export{}, ErrInterrupted)
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("error %v: an interrupted run stays interrupted when a rollback fails", err)
		}
		rb := exp.Rollbacks
		if len(rb) != 2 {
			t.Fatalf("rollbacks %+v, want both, interrupt or not", rb)
		}
		if a := rb[0]; a.StartedAtS != 3 || a.EndedAtS != 3.8 || a.Error != "" || !strings.HasSuffix(a.Detail, "ready after 800ms (3 attempts)") {
			t.Errorf("the first: %+v, want ready at its third attempt, 400ms apart, from 3s to 3.8s", a)
		}
		// attempts at 0, 0.4, ... 4.8s: 13, then its 5s timeout
		if a := rb[1]; a.StartedAtS != 3.8 || a.EndedAtS != 8.8 || !strings.Contains(a.Error, "not ready within 5s (13 attempts") {
			t.Errorf("the second: %+v, want not ready after 13 attempts, from 3.8s to 8.8s (its timeout)", a)
		}
		if len(exp.Run.Notes) != 1 || !strings.Contains(exp.Run.Notes[0], "rollback never:") {
			t.Errorf("notes %q", exp.Run.Notes)
		}
		if !strings.Contains(stderr.String(), "running the workload's 2 rollbacks before stopping") {
			t.Errorf("stderr %q: an interrupted run says it is rolling back", stderr.String())
		}
	})
}
