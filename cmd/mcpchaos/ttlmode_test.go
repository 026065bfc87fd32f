package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
	"github.com/mcpchaos/mcpchaos/results"
)

// ttl_mode: absolute on the built-in reference server ends sessions a TTL after initialize
// while their clients call every 150 ms: they run into dead sessions mid-work. The same
// workload with the sliding default keeps every session.
func TestRunBuiltinAbsoluteTTL(t *testing.T) {
	for _, mode := range []string{"sliding", "absolute"} {
		t.Run(mode, func(t *testing.T) {
			w := writeWorkload(t, `name: ttl-mode
target: {builtin: {session_ttl: 1s, ttl_mode: %s}}
phases:
  - {name: busy, duration: 2.5s, calls: true}
groups:
  - {name: probe, policy: probe, clients: 3, call_every: 150ms, tool: echo}
`, mode)
			out, _, exp := cli(t, "run", w)
			if exp == nil {
				t.Fatalf("no export:\n%s", out)
			}
			dead := exp.Groups[0].Counters["sessions_dead"]
			if mode == "absolute" && dead < 3 || mode == "sliding" && dead != 0 {
				t.Errorf("ttl_mode %s: sessions_dead %d (busy clients, TTL 1s, 2.5s run)\n%s", mode, dead, out)
			}
		})
	}
}

// Against a server by URL the run checks the declared mode against the server's answers: a
// server that ends busy sessions at a fixed lifetime, declared sliding, is named in a note
// (deaths came before the sliding estimate); the Go SDK's server (sliding), declared
// absolute, answers sessions past the estimated death, so the estimate is refuted and its
// figures withheld.
func TestRunURLTTLModeChecked(t *testing.T) {
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{SessionTTL: time.Second, TTLMode: refserver.TTLAbsolute, Retention: time.Minute}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Close() })
	body := `name: ttl-mode
target: {url: %s, session_ttl: 1s, ttl_mode: MODE}
phases:
  - {name: busy, duration: 2.5s, calls: true}
groups:
  - {name: probe, policy: probe, clients: 3, call_every: 150ms, tool: TOOL}
`
	w := writeWorkload(t, strings.NewReplacer("MODE", "sliding", "TOOL", `echo, arguments: {text: "x"}`).Replace(body), inst.URL)
	out, _, exp := cli(t, "run", w)
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	mustContain(t, strings.Join(exp.Run.Notes, "\n"), "sessions were answered dead before the declared session_ttl (1s)", "ttl_mode: absolute")

	srv := peers.GoSDK(t, peers.Options{SessionTTL: time.Second})
	w = writeWorkload(t, strings.NewReplacer("MODE", "absolute", "TOOL", `lookup_order, arguments: {order_id: "o-1", quantity: 1}`).Replace(body), srv.URL)
	out, _, exp = cli(t, "run", w)
	if exp == nil {
		t.Fatalf("no export:\n%s", out)
	}
	mustContain(t, strings.Join(exp.Run.Notes, "\n"), "declares ttl_mode: absolute")
	if why := exp.Run.WithheldWhy("probe", "false_healthy_seconds"); why != results.EstimateRefuted {
		t.Errorf("a sliding server declared absolute: false_healthy_seconds withheld %q, want %q\n%s", why, results.EstimateRefuted, out)
	}
}
