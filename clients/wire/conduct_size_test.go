package wire

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// pacedEvents serves sessions whose GET streams carry one event over the cap: the first
// stream's breaks off after 1 MiB (a fault, or a relay's cut), the next ones' is 4 MiB, sent
// at 64 KiB every 50 ms (longer than the 2 s an event over the cap is read on in a request).
func pacedEvents(t *testing.T) string {
	var gets atomic.Int64
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			switch {
			case strings.Contains(string(body), `"initialize"`):
				w.Header().Set("Mcp-Session-Id", "s-1")
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"paced","version":"1"}}}`)
			default:
				w.WriteHeader(http.StatusAccepted)
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ")
		n, pace := 64, 50*time.Millisecond
		if gets.Add(1) == 1 {
			n, pace = 16, 0
		}
		for range n {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(pace): // the server's pace, not a synchronisation
			}
		}
		if pace != 0 {
			io.WriteString(w, "\n\n")
		}
	})
	return "http://" + loopback.Serve(t, h, nil) + "/mcp"
}

// The first event over the cap that a GET stream meets is read on past the stream's own use,
// in the background, until its end: its size is learnt though it takes longer than a request
// may wait, and a first attempt that its connection cut short is made again on the next such
// event. The conduct's line names the size the server sent, not where the reading stopped.
func TestGetStreamEventSizeLearnt(t *testing.T) {
	ep := hostileEndpoint(t, pacedEvents(t))
	ctx := context.Background()
	s, _, err := ep.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		st, err := s.OpenStream(ctx, "")
		if err != nil || st.Status != http.StatusOK {
			t.Fatalf("stream %d: %v, status %d", i, err, st.Status)
		}
		for _, err := range st.Events(ep.MaxEvent) {
			if err != nil {
				if k := Kind(st.Classify(err, ep.MaxEvent)); k != metrics.ErrTooLarge {
					t.Errorf("stream %d: %v, want too_large", i, k)
				}
				break
			}
		}
		st.Close() // as a client does once its stream failed: the sizer keeps the body
		if i == 0 {
			ep.Conduct().pending.Wait() // the first attempt, cut short, is over
		}
	}
	ep.Conduct().pending.Wait()
	lines := ep.Conduct().Lines()
	want := "an event of 4.0 MiB"
	if len(lines) != 1 || lines[0].Behaviour != HugeEvent || !strings.Contains(lines[0].Text, want) {
		t.Fatalf("conduct lines %+v, want one naming %q", lines, want)
	}
	t.Log(lines[0].Text)
}
