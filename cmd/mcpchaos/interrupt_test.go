package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// interruptWorkload runs a few sessions through a proxy outage in about 1.5 s.
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
  - {name: naive, policy: naive, clients: 2, ramp: 50ms, call_every: 30ms, retry_backoff: 5ms}
faults:
  - {name: out, toxic: down, at: 500ms, for: 500ms}
`

// What `run` writes when interrupted: exit 130, the export and its companions once the clients
// had started (and nothing while it was still setting up), never a temporary file left behind.
// What the run itself does on an interrupt (the export marked, the fleets ended within 5 s, no
// proxy left) is engine's, tested there at random moments (engine/interrupt_test.go).
func TestInterruptWritesTheExports(t *testing.T) {
	t.Parallel()
	w, err := workloads.Parse("tiny.yaml", []byte(interruptWorkload))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Interrupts before anything ran (the context already ended), mid-run, and never.
	for i, after := range []time.Duration{0, 800 * time.Millisecond, time.Hour} {
		out := filepath.Join(dir, "r"+string(rune('a'+i))+".json")
		ctx, cancel := context.WithCancel(context.Background())
		if after == 0 {
			cancel()
		}
		timer := time.AfterFunc(after, cancel) // the interrupt itself, not a synchronisation
		runErr := runWorkload(ctx, w, runFlags{out: out, progress: "off", quiet: true, formats: "csv,hgrm,junit"}, io.Discard, io.Discard)
		interrupted := !timer.Stop() || after == 0
		cancel()
		code := exitCode(runErr)
		_, statErr := os.Stat(out)
		switch {
		case interrupted && code != exitInterrupted:
			t.Errorf("run %d (interrupt after %v): %v (exit %d), want interrupted (130)", i, after, runErr, code)
			continue
		case !interrupted && code == exitInterrupted:
			t.Errorf("run %d: exit 130 without an interrupt", i)
		case errors.Is(statErr, os.ErrNotExist):
			// Interrupted while setting up (on a loaded machine set-up can outlast 800 ms):
			// nothing ran, nothing is written.
			if !interrupted {
				t.Errorf("run %d: finished (%v) without an export", i, runErr)
			}
			continue
		case after == 0:
			t.Errorf("interrupted before the start, yet an export was written")
		}
		exp, err := results.ReadFile(out)
		if err != nil {
			t.Errorf("run %d (interrupt after %v): export does not read: %v", i, after, err)
			continue
		}
		if exp.Run.Interrupted != interrupted {
			t.Errorf("run %d: export interrupted=%v, the run was interrupted: %v", i, exp.Run.Interrupted, interrupted)
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
}
