package faults

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
)

// endlessLine serves an SSE stream whose data line never ends, and counts what it wrote.
func endlessLine(t *testing.T) (addr string, written *atomic.Int64) {
	written = new(atomic.Int64)
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ")
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	return loopback.Serve(t, h, nil), written
}

// stalled waits (at most 20 s) until the server's writes stop advancing: every buffer between
// it and the client that reads nothing is full, so each toxic in the chain is blocked on its
// output. On a machine too busy to show that, the test still checks its bounds.
func stalled(written *atomic.Int64) {
	last := int64(-1)
	for range 200 {
		n := written.Load()
		if n == last && n > 0 {
			return
		}
		last = n
		time.Sleep(100 * time.Millisecond) // polling a byte count, not synchronising
	}
}

// A server streaming an endless line to a client that reads nothing wedges the proxy's toxic
// chain. The schedule must still add its faults (the own toxic yields to interrupts), abandon
// what Toxiproxy cannot do within the bound (its latency toxic does not yield), and return;
// closing the injector is bounded too.
func TestScheduleEndsAgainstAStalledStream(t *testing.T) {
	upstream, written := endlessLine(t)
	inj, listen := newProxy(t, upstream)
	ctx := context.Background()
	if err := inj.AddToxic(ctx, "p", Toxic{Name: "lb", Type: "idle_timeout", Attributes: map[string]any{"timeout": 600000}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, listen)
	if _, err := io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	stalled(written)

	const bound = 2 * time.Second
	var mu sync.Mutex
	var changes []Change
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := runSchedule(runCtx, inj, start, []Scheduled{
		{Fault: Toxic{Name: "lb2", Type: "idle_timeout", Attributes: map[string]any{"timeout": 600000}}, Proxies: []string{"p"}, For: 100 * time.Millisecond},
		{Fault: Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 1}}, Proxies: []string{"p"}, At: 150 * time.Millisecond},
	}, func(ch Change) {
		mu.Lock()
		changes = append(changes, ch)
		mu.Unlock()
	}, bound)
	took := time.Since(start)
	t.Logf("schedule returned after %v: %v", took, err)
	for _, ch := range changes {
		t.Logf("%+v", ch)
	}
	if runCtx.Err() == nil {
		t.Error("the schedule returned before the run ended")
	}
	// At most one call is waited out during the run and one at cleanup (then it is wedged).
	if limit := 300*time.Millisecond + 3*bound + 5*time.Second; took > limit {
		t.Errorf("the schedule took %v, more than %v", took, limit)
	}
	if len(changes) == 0 || !changes[0].Added || changes[0].Fault != "lb2" || changes[0].Err != nil {
		t.Fatalf("adding idle_timeout over a stalled idle_timeout: %+v", changes)
	}
	if err != nil && !errors.Is(err, ErrAbandoned) {
		t.Errorf("the schedule failed otherwise than by abandoning a call: %v", err)
	}
	// Every step attempted is reported, abandoned or not; lb2's removal comes after its add.
	if len(changes) < 2 || changes[1].Added || changes[1].Fault != "lb2" {
		t.Errorf("lb2's removal not reported second: %+v", changes)
	}
	closed := time.Now()
	inj.Close()
	if d := time.Since(closed); d > CallBound+5*time.Second {
		t.Errorf("Close took %v", d)
	}
}
