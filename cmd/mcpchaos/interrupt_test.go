package main

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

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

// Interrupts at random moments, many times: every run that got as far as starting writes an
// export that parses and is marked interrupted, and no proxy is left listening. A run
// interrupted while still setting up writes nothing and leaves nothing.
func TestInterruptAtRandomMoments(t *testing.T) {
	t.Parallel()
	w, err := workloads.Parse("tiny.yaml", []byte(interruptWorkload))
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	const runs = 20
	exported := 0
	for i := range runs {
		out := filepath.Join(dir, "r"+string(rune('a'+i))+".json")
		// Offsets from 0 to past the run's end; every fourth in the first 50 ms (set-up).
		span := 1800 * time.Millisecond
		if i%4 == 0 {
			span = 50 * time.Millisecond
		}
		after := time.Duration(rng.Int64N(int64(span)))
		ctx, cancel := context.WithCancel(context.Background())
		var sent atomic.Pointer[time.Time]      // when the interrupt really came: a timer fires late on a loaded machine
		timer := time.AfterFunc(after, func() { // the interrupt itself, not a synchronisation
			now := time.Now()
			sent.Store(&now)
			cancel()
		})
		runErr := runWorkload(ctx, w, runFlags{out: out, progress: "off", quiet: true, formats: "csv,hgrm,junit"}, io.Discard, io.Discard)
		returned := time.Now()
		interrupted := !timer.Stop() // it may also have come just after the run ended
		cancel()
		if runErr != nil && (!interrupted || exitCode(runErr) != exitInterrupted) {
			t.Errorf("run %d (interrupt after %v): %v (exit %d), want interrupted (130)", i, after, runErr, exitCode(runErr))
			continue
		}
		// Writing the export and its companions is not bounded by the 5 s promise (it is by
		// the process getting CPU), but a run must never hang after an interrupt.
		if at := sent.Load(); interrupted && at != nil && returned.Sub(*at) > 30*time.Second {
			t.Errorf("run %d: returned %v after the interrupt", i, returned.Sub(*at))
		}
		if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
			if runErr == nil {
				t.Errorf("run %d: finished without an export", i)
			}
			continue // interrupted while setting up: nothing ran
		}
		exp, err := results.ReadFile(out)
		if err != nil {
			t.Errorf("run %d (interrupt after %v): export does not read: %v", i, after, err)
			continue
		}
		exported++
		if exp.Run.Interrupted != (runErr != nil) {
			t.Errorf("run %d: export interrupted=%v, run returned %v", i, exp.Run.Interrupted, runErr)
		}
		// The README's promise: every fleet ends within 5 s of an interrupt. The export's end
		// is when the last fleet stopped; before it, the fleets were still running.
		if at := sent.Load(); exp.Run.Interrupted && at != nil && exp.Run.End.Sub(*at) > 5*time.Second {
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
		for _, ext := range []string{".csv", ".junit.xml"} {
			if _, err := os.Stat(out[:len(out)-len(".json")] + ext); err != nil {
				t.Errorf("run %d: companion %s: %v", i, ext, err)
			}
		}
	}
	// No temporary file of an atomic write is left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); filepath.Ext(n) != ".json" && filepath.Ext(n) != ".csv" && filepath.Ext(n) != ".xml" && filepath.Ext(n) != ".hgrm" {
			t.Errorf("left in the export directory: %s", n)
		}
	}
	t.Logf("%d of %d runs wrote an export", exported, runs)
}
