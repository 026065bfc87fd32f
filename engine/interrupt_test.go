package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// interruptWorkload runs a few sessions through a drop and a proxy outage in about 1.5 s.
const interruptWorkload = `name: tiny
target:
  builtin:
    session_ttl: 400ms
    retention: 2s
    notify_interval: 50ms
    retry: 20ms
phases:
  - {name: active, duration: 1500ms, calls: true}
groups:
  - {name: naive, policy: naive, clients: 3, ramp: 50ms, call_every: 30ms, retry_backoff: 5ms}
  - {name: probe, policy: probe, probe: ping, clients: 3, ramp: 50ms, call_every: 30ms, retry_backoff: 5ms}
faults:
  - {name: cut, toxic: idle_timeout, attributes: {timeout: 40}, at: 200ms, for: 200ms}
  - {name: out, toxic: down, at: 500ms, for: 500ms}
`

// interruptedRun is what Run returned, whether the interrupt came before Run returned, and when
// it really came (a timer fires late on a loaded machine).
type interruptedRun struct {
	exp         *results.Export
	err         error
	interrupted bool
	at          *time.Time
}

// interruptAt runs plan and interrupts it after `after` (the interrupt itself, not a
// synchronisation: the moment is random on purpose).
func interruptAt(t *testing.T, plan *Plan, after time.Duration) interruptedRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent atomic.Pointer[time.Time]
	timer := time.AfterFunc(after, func() {
		now := time.Now()
		sent.Store(&now)
		cancel()
	})
	exp, err := Run(ctx, plan, WithStderr(testWriter{t}))
	interrupted := !timer.Stop() // it may also have come just after the run ended
	return interruptedRun{exp: exp, err: err, interrupted: interrupted, at: sent.Load()}
}

// checkInterrupted checks Run's promise for an interrupt: ErrInterrupted (or nil when the run
// ended first), an export once the clients started, marked so, that survives a round trip
// through JSON. It returns the export, nil when there is none.
func checkInterrupted(t *testing.T, i int, after time.Duration, r interruptedRun) *results.Export {
	t.Helper()
	exp, err, interrupted := r.exp, r.err, r.interrupted
	if err != nil && (!interrupted || !errors.Is(err, ErrInterrupted)) {
		t.Errorf("run %d (interrupt after %v): %v, want ErrInterrupted", i, after, err)
		return nil
	}
	if exp == nil {
		if err == nil {
			t.Errorf("run %d: finished without an export", i)
		}
		return nil // interrupted while setting up: nothing ran
	}
	if exp.Run.Interrupted != (err != nil) {
		t.Errorf("run %d: export interrupted=%v, Run returned %v", i, exp.Run.Interrupted, err)
	}
	data, merr := json.Marshal(exp)
	if merr == nil {
		_, merr = results.Parse("export", data)
	}
	if merr != nil {
		t.Errorf("run %d (interrupt after %v): the export does not read back: %v", i, after, merr)
	}
	return exp
}

// Interrupts at random moments, many times: every run that got as far as starting returns an
// export that is marked interrupted and reads back whole, its fleets end within 5 s of the
// interrupt, and no proxy is left listening. A run interrupted while still setting up returns
// no export and leaves nothing.
func TestInterruptAtRandomMoments(t *testing.T) {
	t.Parallel()
	w, err := workloads.Parse("tiny.yaml", []byte(interruptWorkload))
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	const runs = 20
	exported := 0
	for i := range runs {
		// Offsets from 0 to past the run's end; every fourth in the first 50 ms (set-up).
		span := 1800 * time.Millisecond
		if i%4 == 0 {
			span = 50 * time.Millisecond
		}
		after := time.Duration(rng.Int64N(int64(span)))
		r := interruptAt(t, mustPlan(t, w), after)
		returned, at := time.Now(), r.at
		if at != nil && r.interrupted && returned.Sub(*at) > 30*time.Second {
			t.Errorf("run %d: returned %v after the interrupt", i, returned.Sub(*at))
		}
		exp := checkInterrupted(t, i, after, r)
		if exp == nil {
			continue
		}
		exported++
		// The README's promise: every fleet ends within 5 s of an interrupt. The export's end
		// is when the last fleet stopped; before it, the fleets were still running.
		if exp.Run.Interrupted && at != nil && exp.Run.End.Sub(*at) > 5*time.Second {
			t.Errorf("run %d: the fleets ended %v after the interrupt, over 5s", i, exp.Run.End.Sub(*at))
		}
		if len(exp.Run.Proxies) != 2 {
			t.Errorf("run %d: proxies in export: %v", i, exp.Run.Proxies)
		}
		for g, addr := range exp.Run.Proxies {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("run %d: group %s: proxy %s still accepts connections", i, g, addr)
			}
		}
	}
	t.Logf("%d of %d runs returned an export", exported, runs)
}

// The same promise against a real, shared toxiproxy-server: interrupted at random moments,
// a run leaves none of its proxies on the server, and whatever export it returned reads whole.
func TestInterruptAtRandomMomentsExternalToxiproxy(t *testing.T) {
	t.Parallel()
	api := toxiproxytest.Start(t) // skips without the binary; fails under CI=true
	w, err := workloads.Parse("tiny.yaml", []byte(strings.Replace(interruptWorkload,
		"  - {name: cut, toxic: idle_timeout, attributes: {timeout: 40}, at: 200ms, for: 200ms}\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	server := toxiclient.NewClient(strings.TrimPrefix(api, "http://"))
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	for i := range 8 {
		after := time.Duration(rng.Int64N(int64(1800 * time.Millisecond)))
		checkInterrupted(t, i, after, interruptAt(t, mustPlan(t, w, WithToxiproxy(api)), after))
		proxies, err := server.Proxies()
		if err != nil {
			t.Fatalf("listing the server's proxies: %v", err)
		}
		for name := range proxies {
			if strings.HasPrefix(name, "mcpchaos-") {
				t.Errorf("run %d (interrupt after %v): proxy %s left on the server", i, after, name)
			}
		}
	}
}
