package metrics

import "testing"

// The names and help texts are positional arrays beside the iota lists: a metric added to one
// and not the other would export under another's name or with no help (Prometheus then
// refuses the collector).
func TestCatalogComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Counters() {
		if c.String() == "" || c.Help() == "" {
			t.Errorf("counter %d: name %q, help %q", int(c), c.String(), c.Help())
		}
		if seen[c.String()] {
			t.Errorf("counter name %q twice", c.String())
		}
		seen[c.String()] = true
	}
	for _, h := range Hists() {
		if h.String() == "" || h.Help() == "" {
			t.Errorf("histogram %d: name %q, help %q", int(h), h.String(), h.Help())
		}
		if seen[h.String()] {
			t.Errorf("metric name %q twice", h.String())
		}
		seen[h.String()] = true
	}
	for _, want := range []string{"reconnects_refused", "live_sessions_declared_dead", "wrong_era_requests", "refusal_duration", "session_life"} {
		if !seen[want] {
			t.Errorf("%s missing from the catalog", want)
		}
	}
}
