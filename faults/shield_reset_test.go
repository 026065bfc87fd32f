package faults

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/hostile"
)

// A server that resets its connection in the middle of an SSE event: a client behind the
// shielded embedded Toxiproxy sees the reset (issue 20). Before, the server relay left
// Toxiproxy's side open after the reset and the client waited for the rest of the event
// until its own timeout; without the shield, Toxiproxy passes the reset on as a close.
func TestShieldPassesAServersResetOn(t *testing.T) {
	h := hostile.New(t)
	e, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	inj := Shield(e)
	defer inj.Close()
	upstream := strings.TrimSuffix(strings.TrimPrefix(h.URL(""), "http://"), "/")
	addr, err := inj.AddProxy(context.Background(), "p", upstream)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound; the reset comes at once
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/reset-mid-event", nil)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			cancel()
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if !strings.HasPrefix(string(b), "id: 1\ndata: ") || !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("request %d: read %q, then %v; want the event's start, then a reset", i, b, err)
		}
	}
}
