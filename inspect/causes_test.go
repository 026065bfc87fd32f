package inspect

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// A GET stream whose event outgrows inspect's cap is named as that, not as the server closing
// the stream, and draws no no_keepalive from it.
func TestHugeEventNamedAsInspectsCap(t *testing.T) {
	var sessions atomic.Int64
	line := strings.Repeat("x", 2*maxEvent)
	u := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, done := initialized(w, r, &sessions)
		switch {
		case done:
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: " + line + "\n\n"))
			<-r.Context().Done()
		}
	}), "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fp, err := Inspect(ctx, Options{Conn: wire.Conn{URL: u}, Idle: 2 * time.Second, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	WriteTable(&table, fp)
	if fp.StreamCutMS == nil || fp.StreamClosedMS != nil {
		t.Errorf("cut at %v, closed at %v: want cut by inspect's cap, not closed\n%s", fp.StreamCutMS, fp.StreamClosedMS, table.String())
	}
	if !strings.Contains(table.String(), "an event over inspect's cap") || strings.Contains(table.String(), "the server closed the stream") {
		t.Errorf("the table blames the server:\n%s", table.String())
	}
	hz := factsOf(fp).Hazards
	if slices.Contains(hz, "no_keepalive") || !slices.Contains(hz, "protocol_violation") {
		t.Errorf("hazards %v: want protocol_violation, not no_keepalive\n%s", hz, table.String())
	}
}

// stormServer answers initialize and DELETE, then every request with status (a 500 storm), or, with
// getOnly, serves POSTs of live sessions, refuses those of sessions it deleted with 404, and
// answers every GET with status (a 409 on GET).
func stormServer(t *testing.T, status int, getOnly bool) *url.URL {
	var sessions atomic.Int64
	var deleted sync.Map
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if _, gone := deleted.Load(id); gone && getOnly && r.Method == http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		m, done := initialized(w, r, &sessions)
		switch {
		case done:
		case r.Method == http.MethodDelete:
			deleted.Store(id, true)
		case !getOnly || r.Method == http.MethodGet:
			w.WriteHeader(status)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	}), "/mcp")
}

// A 500 storm and a 409 on every GET are not dead-session statuses: a client told to count
// them as deaths would misread a failing server, or every live stream, as sessions dying.
func TestStatusStormsAreNotDeathStatuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		getOnly bool
	}{{"500 on everything", 500, false}, {"409 on GET", 409, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fp, err := Inspect(ctx, Options{Conn: wire.Conn{URL: stormServer(t, tc.status, tc.getOnly)}, Idle: 300 * time.Millisecond, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var table strings.Builder
			WriteTable(&table, fp)
			if fp.DeadStatus.KilledBy != "delete" {
				t.Fatalf("no session was deleted, nothing tested\n%s", table.String())
			}
			if isTrue(fp.GetValidatesSession) {
				t.Errorf("GET said to validate the session from a %d it gives every GET\n%s", tc.status, table.String())
			}
			if slices.Contains(factsOf(fp).Hazards, "nonstandard_dead_status") || slices.Contains(fp.Verdict.DeadStatuses, tc.status) {
				t.Errorf("dead statuses %v, hazards %v: %d taken for a death\n%s", fp.Verdict.DeadStatuses, factsOf(fp).Hazards, tc.status, table.String())
			}
		})
	}
}

// A server that accepts the request and never answers is named as that, not as "context
// deadline exceeded".
func TestNoResponseNamed(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	u := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Inspect(ctx, Options{Conn: wire.Conn{URL: u}, Idle: 300 * time.Millisecond, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no response: the server took the request and sent no status line") {
		t.Fatalf("got %v, want it to say the server sent no response", err)
	}
}
