package inspect

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients"
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
	fp, err := Inspect(ctx, Options{Conn: clients.Conn{URL: u}, Idle: 2 * time.Second, Timeout: 2 * time.Second})
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
