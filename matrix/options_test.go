package matrix

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// Apply: the strict regime is the reference server's only; a URL target keeps the scenario's
// declared TTL; the tool call replaces every group's; the built-in outage outlasts the TTL by
// 3.5 s, and a TTL of more than a minute (or none) is refused.
func TestApply(t *testing.T) {
	w, err := Scenario()
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(w, true, Options{Strict: true}); err != nil {
		t.Fatal(err)
	}
	if w.Target.Builtin.GetValidation != workloads.GetStrict {
		t.Errorf("strict regime: GET validation %q", w.Target.Builtin.GetValidation)
	}
	if got, want := w.Faults[0].For, w.Target.SessionTTL+3500*time.Millisecond; got != want {
		t.Errorf("outage lasts %s, want the TTL + 3.5s = %s", got, want)
	}

	w, _ = Scenario()
	ttl := w.Target.SessionTTL
	args := map[string]any{"delay_ms": 5000}
	if err := Apply(w, true, Options{URL: "http://127.0.0.1:9/mcp", Tool: "slow", Arguments: args, SessionTTL: "9s"}); err != nil {
		t.Fatal(err)
	}
	if w.Target.URL != "http://127.0.0.1:9/mcp" || w.Target.Builtin != nil || w.Target.SessionTTL != ttl {
		t.Errorf("URL target: %+v", w.Target)
	}
	for _, g := range w.Groups {
		if g.Tool != "slow" || g.Arguments["delay_ms"] != 5000 {
			t.Errorf("group %s calls %s %v", g.Name, g.Tool, g.Arguments)
		}
	}
	if got := w.Faults[0].For; got != 12500*time.Millisecond {
		t.Errorf("outage against a 9s TTL lasts %s, want 12.5s", got)
	}

	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Strict: true, URL: "http://127.0.0.1:9/mcp"}, "a server given by URL has its own"},
		{Options{SessionTTL: "none"}, "--session-ttl none"},
		{Options{SessionTTL: "2m"}, "--session-ttl 2m0s: the matrix waits the TTL out"},
		{Options{SessionTTL: "-1s"}, "want a duration greater than 0"},
	} {
		w, _ := Scenario()
		if err := Apply(w, true, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	w, _ = Scenario()
	before := w.Faults[0].For
	if err := Apply(w, false, Options{SessionTTL: "none"}); err != nil || w.Faults[0].For != before {
		t.Errorf("a workload of the user's keeps its own faults: %v, %s", err, w.Faults[0].For)
	}
}
