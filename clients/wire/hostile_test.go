package wire

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/hostile"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Each misbehaviour is seen, classified, bounded in time, and survives.
func TestHostileServer(t *testing.T) {
	h := hostile.New(t)
	ctx := context.Background()
	// op: what the client does against the behaviour. An answer that is not a success counts
	// as a status error, as the fleet counts it.
	initOnly := func(ep *Endpoint) error {
		_, _, err := ep.Initialize(ctx)
		return err
	}
	call := func(ep *Endpoint) error {
		s, _, err := ep.Initialize(ctx)
		if err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		rep, err := s.Ping(ctx)
		if err == nil && rep.Status/100 != 2 {
			err = &StatusError{Status: rep.Status}
		}
		return err
	}
	stream := func(ep *Endpoint) error {
		s, _, err := ep.Initialize(ctx)
		if err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		st, err := s.OpenStream(ctx, "")
		if err != nil {
			return err
		}
		if st.Status != http.StatusOK {
			return &StatusError{Status: st.Status}
		}
		defer st.Close()
		for _, err := range st.Events(ep.MaxEvent) {
			if err != nil {
				return ClassifyRead(err, ep.MaxEvent)
			}
		}
		return nil
	}
	cases := []struct {
		behaviour string
		op        func(*Endpoint) error
		want      metrics.ErrorKind
	}{
		{"giant-event", stream, metrics.ErrTooLarge},
		{"giant-event", call, metrics.ErrTooLarge}, // as the SSE reply to a POST
		{"endless-line", stream, metrics.ErrTooLarge},
		{"endless-line", call, metrics.ErrTooLarge},
		{"trickle-headers", initOnly, metrics.ErrTimeout},
		{"never-answered", initOnly, metrics.ErrTimeout},
		{"trickle-stream-headers", stream, metrics.ErrTimeout}, // a held stream's wait for headers
		{"never-answered-stream", stream, metrics.ErrTimeout},
		{"stalled-sse-reply", call, metrics.ErrTimeout},
		{"html", call, metrics.ErrProtocol},
		{"html", stream, metrics.ErrProtocol},
		{"no-content-type", call, metrics.ErrProtocol},
		{"not-json", call, metrics.ErrProtocol},
		{"not-json-sse", call, metrics.ErrProtocol},
		{"wrong-id", call, metrics.ErrProtocol},
		{"result-and-error", call, metrics.ErrProtocol},
		{"no-version", call, metrics.ErrProtocol},
		{"storm-500", call, metrics.ErrStatus},
		{"storm-429", call, metrics.ErrStatus},
		{"redirect-off-origin", initOnly, metrics.ErrRedirect},
		{"redirect-loop", initOnly, metrics.ErrRedirect},
		{"gzip-bomb", call, metrics.ErrTooLarge}, // never inflated (the client asks for no encoding): over MaxBody
		{"gzip-bomb-sse", call, metrics.ErrTooLarge},
		{"reset-mid-event", stream, metrics.ErrReset},
		{"huge-header", initOnly, metrics.ErrTooLarge},
		{"huge-header", stream, metrics.ErrTooLarge},
		{"huge-session-id", initOnly, metrics.ErrBadSessionID},
		{"control-session-id", initOnly, metrics.ErrBadSessionID},
		{"get-405", stream, metrics.ErrStatus},
		{"get-409", stream, metrics.ErrStatus},
		{"get-409-body-never-sent", stream, metrics.ErrStatus},
	}
	for _, c := range cases {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Parallel()
			ep := hostileEndpoint(t, h.URL(c.behaviour))
			start := time.Now()
			err := c.op(ep)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("no error")
			}
			if k := Kind(err); k != c.want {
				t.Errorf("classified %s, want %s (error: %.300v)", k, c.want, err)
			}
			// Every wait is bounded by the request timeout (initialize, then the request).
			if limit := 3*ep.RequestTimeout + time.Second; took > limit {
				t.Errorf("took %v, over %v", took, limit)
			}
		})
	}
	if n := h.OffOrigin.Load(); n != 0 {
		t.Errorf("%d requests followed a redirect to another origin", n)
	}
}

// Cursors follow the server's ids whatever they do, and an absurd retry: cannot park a client.
func TestHostileEventIDsAndRetry(t *testing.T) {
	h := hostile.New(t)
	ctx := context.Background()
	ep := hostileEndpoint(t, h.URL("event-ids"))
	s, _, err := ep.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.OpenStream(ctx, "")
	if err != nil || st.Status != 200 {
		t.Fatalf("open: %v %+v", err, st)
	}
	var cursors []string
	for ev, err := range st.Events(ep.MaxEvent) {
		if err != nil {
			t.Fatal(err)
		}
		cursors = append(cursors, ev.Cursor)
	}
	st.Close()
	if got := strings.Join(cursors, ","); got != "5,3,3," {
		t.Errorf("cursors %q, want 5,3,3, (an empty id: resets the cursor)", got)
	}

	ep = hostileEndpoint(t, h.URL("absurd-retry"))
	s, _, err = ep.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err = s.OpenStream(ctx, "")
	if err != nil || st.Status != 200 {
		t.Fatalf("open: %v %+v", err, st)
	}
	for _, err := range st.Events(ep.MaxEvent) {
		if err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if st.Retry() != 9223372036854775807 {
		t.Fatalf("retry %d", st.Retry())
	}
	for _, ms := range []int64{st.Retry(), 1 << 62, 9223372036854, 5000} {
		if d := RetryDelay(ms, 100*time.Millisecond, time.Second); d != time.Second {
			t.Errorf("retry %d ms: delay %v, want the 1s ceiling", ms, d)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	target, _ := url.Parse("https://mcp.example.com/mcp")
	check := SameOrigin(target)
	for _, c := range []struct {
		to   string
		via  int
		want bool
	}{
		{"https://mcp.example.com/v2/mcp", 1, true},
		{"https://mcp.example.com:443/mcp", 1, true},
		{"https://mcp.example.com:8443/mcp", 1, false},
		{"http://mcp.example.com/mcp", 1, false},
		{"https://evil.example.com/mcp", 1, false},
		{"https://mcp.example.com/mcp", maxRedirects + 1, false},
	} {
		u, _ := url.Parse(c.to)
		err := check(&http.Request{URL: u}, make([]*http.Request, c.via))
		if (err == nil) != c.want {
			t.Errorf("%s after %d: %v", c.to, c.via, err)
		}
	}
}

// hostileEndpoint reaches one behaviour through the HTTP client the tool builds for targets.
func hostileEndpoint(t *testing.T, raw string) *Endpoint {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := NewHTTPClient(Conn{URL: u, MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	return &Endpoint{URL: raw, HTTP: hc, Protocol: Protocol20251125, RequestTimeout: 400 * time.Millisecond,
		MaxBody: 64 << 10, MaxEvent: 64 << 10, ClientName: "hostile-test"}
}

// A gzip body under the body cap (sent though mcpchaos asks for no encoding) does not decode
// as JSON: the error says the body was gzip-encoded, not only "invalid character '\x1f'"
// (issue 30: `run` stopped at set-up saying just that).
func TestGzipBodyNamed(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	_ = zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(gz.Bytes())
	}))
	defer srv.Close()
	_, _, err := hostileEndpoint(t, srv.URL+"/mcp").Initialize(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the body was gzip-encoded") || Kind(err) != metrics.ErrProtocol {
		t.Errorf("initialize against a gzip body: %v (kind %s), want a protocol error saying the body was gzip-encoded", err, Kind(err))
	}
}
