package bench

import (
	"context"
	"testing"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// The promises the Performance section makes, held small: every session established, every
// call answered, about one goroutine per held session for this tool's client,
// fewer goroutines than the Go SDK client, probes close to bare round trips.
func TestRunHoldsSessionsCheaply(t *testing.T) {
	if testing.Short() {
		t.Skip("holds sessions")
	}
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	got := map[string]*Result{}
	for _, kind := range []string{Lean, GoSDK} {
		err := Run(context.Background(), Options{Client: kind, URL: inst.URL, Sessions: 200, Rounds: 1, Probes: 20, Workers: 4},
			func(r *Result) error { got[kind] = r; return nil })
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		r := got[kind]
		t.Logf("%s: %+v", kind, *r)
		if r.Calls != 200 || r.CallErrors != 0 {
			t.Errorf("%s: %d calls, %d errors; want 200 and 0", kind, r.Calls, r.CallErrors)
		}
		if r.ProbeP50US <= 0 || r.BareP50US <= 0 || r.Protocol != "2025-11-25" {
			t.Errorf("%s: probe %d µs, bare %d µs, protocol %q", kind, r.ProbeP50US, r.BareP50US, r.Protocol)
		}
		if r.ProxyGoroutines < 200 {
			t.Errorf("%s: %d goroutines in Toxiproxy for 200 proxied sessions; is the proxy in the path?", kind, r.ProxyGoroutines)
		}
	}
	lean, sdk := got[Lean], got[GoSDK]
	if g := lean.GoroutinesPerSession(); g > 1.5 {
		t.Errorf("mcpchaos client: %.2f goroutines per held session outside Toxiproxy, want about 1", g)
	}
	if lean.GoroutinesPerSession() >= sdk.GoroutinesPerSession() {
		t.Errorf("goroutines per session: mcpchaos %.2f, Go SDK %.2f", lean.GoroutinesPerSession(), sdk.GoroutinesPerSession())
	}
}

func TestRunRefusesNonLoopback(t *testing.T) {
	err := Run(context.Background(), Options{Client: Lean, URL: "http://192.0.2.1/mcp", Sessions: 1}, nil)
	if err == nil {
		t.Fatal("a non-loopback target was accepted")
	}
}
