package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDispatchLagArithmetic checks, on an injected clock, which stretches of an exchange are
// the generator's: the send until the request was written (a dial and a TLS handshake left
// out), and the reply's first byte until the caller had it; the server's time between is not.
func TestDispatchLagArithmetic(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	cases := []struct {
		name string
		e    exchangeTimes
		want time.Duration
	}{
		{"pooled connection", exchangeTimes{start: at(0), wrote: at(300), firstByte: at(5300), returned: at(5700)}, 700 * time.Microsecond},
		{"new connection: the dial is the network's", exchangeTimes{start: at(0), connect: 1000 * time.Microsecond, wrote: at(1200), firstByte: at(4200), returned: at(4300)}, 300 * time.Microsecond},
		{"the reply came before the write hook ran", exchangeTimes{start: at(0), wrote: at(900), firstByte: at(600), returned: at(1000)}, 1000 * time.Microsecond},
		{"no hooks (the request failed before writing)", exchangeTimes{start: at(0), returned: at(800)}, 0},
		{"written, no reply", exchangeTimes{start: at(0), wrote: at(200), returned: at(9000)}, 200 * time.Microsecond},
		{"a clock that went back", exchangeTimes{start: at(10), returned: at(0)}, 0},
	}
	for _, c := range cases {
		if got := c.e.lag(); got != c.want {
			t.Errorf("%s: lag %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDispatchLagOfARealExchange sends requests to a loopback server that holds its reply:
// each exchange's lag is measured (net/http's hooks fired), is part of the exchange's time, and
// adds up in the context's DispatchLag. (How much of the hold it leaves out depends on when the
// transport's goroutines ran; the arithmetic test above pins that down on a fixed clock.)
func TestDispatchLagOfARealExchange(t *testing.T) {
	const hold = 50 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&req)
		time.Sleep(hold) // the server's own time, which is not the generator's
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`))
	}))
	defer srv.Close()
	ep := &Endpoint{URL: srv.URL, HTTP: srv.Client(), RequestTimeout: 10 * time.Second, MaxBody: 1 << 20, MaxEvent: 1 << 20}
	s := &Session{ep: ep, ID: "s1"}
	var total DispatchLag
	var sum time.Duration
	ctx := WithDispatchLag(context.Background(), &total)
	for range 2 {
		start := time.Now()
		rep, err := s.Call(ctx, "ping", nil)
		took := time.Since(start)
		if err != nil || rep.Status != http.StatusOK {
			t.Fatalf("ping: %v %+v", err, rep)
		}
		if rep.Lag <= 0 || rep.Lag > took {
			t.Fatalf("dispatch lag %v of an exchange that took %v", rep.Lag, took)
		}
		sum += rep.Lag
	}
	if total.Total() != sum {
		t.Fatalf("the context's dispatch lag is %v after two exchanges of %v", total.Total(), sum)
	}
}
