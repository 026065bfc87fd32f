package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// slowInitialize serves target through a reverse proxy that holds every initialize for d
// before passing it on (a server whose initialize waits on a cold backend, or a runner too
// busy to start its clients on time): the clients' first sessions come late.
func slowInitialize(t *testing.T, target string, d time.Duration) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host}) // the path is the request's
	rp.FlushInterval = -1
	return "http://" + loopback.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"method":"initialize"`)) {
				select {
				case <-time.After(d):
				case <-r.Context().Done():
					return
				}
			}
		}
		rp.ServeHTTP(w, r)
	}), nil) + u.Path
}

// A calls phase whose planned turns mostly came before the clients had a session (their
// initialize came late) made few of its calls: those turns are counted in calls_not_made and
// calls_not_started, and past 80% of the phase the run is incomplete, exit 1, said why. Run
// against the reference server and the Go SDK's server, each behind the slow initialize.
func TestRunLateStartIsIncomplete(t *testing.T) {
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{SessionTTL: time.Minute, Retention: time.Minute}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Close() })
	for _, tc := range []struct{ name, url, tool string }{
		{"reference", inst.URL, `echo, arguments: {text: "x"}`},
		{"go-sdk", peers.GoSDK(t, peers.Options{SessionTTL: time.Minute}).URL, `lookup_order, arguments: {order_id: "o-1", quantity: 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := writeWorkload(t, strings.Replace(`name: late-start
target: {url: %s, session_ttl: none}
phases:
  - {name: first, duration: 1s, calls: true}
  - {name: second, duration: 1s, calls: true}
groups:
  - {name: probe, policy: probe, clients: 3, call_every: 100ms, tool: TOOL}
`, "TOOL", tc.tool, 1), slowInitialize(t, tc.url, 1500*time.Millisecond))
			out, code, exp := cli(t, "run", w)
			if code != exitRuntime || exp == nil {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			mustContain(t, out, "group probe: phase first: only ", "came before their client's first session was live (counted in calls_not_made)", "80%")
			ph := exp.Phases[0]
			if ns := ph.CallsNotStarted["probe"]; ns == 0 || ph.CallsNotMade["probe"] < ns || ph.Turns["probe"] < ns {
				t.Errorf("phase first: turns %d, calls not made %d, not started %d", ph.Turns["probe"], ph.CallsNotMade["probe"], ns)
			}
			if g := exp.Groups[0]; g.Counters["calls_not_made"] < ph.CallsNotStarted["probe"] {
				t.Errorf("calls_not_made %d, fewer than the turns not started", g.Counters["calls_not_made"])
			}
			if !strings.Contains(exp.Run.Error, "the clients started late") {
				t.Errorf("the export's error does not say why: %q", exp.Run.Error)
			}
		})
	}
}
