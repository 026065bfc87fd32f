package main

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/mcpchaos/mcpchaos/faults/toxiproxytest"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// The same promise against a real, shared toxiproxy-server: interrupted at random moments,
// a run leaves none of its proxies on the server, and whatever export it wrote reads whole.
func TestInterruptAtRandomMomentsExternalToxiproxy(t *testing.T) {
	t.Parallel()
	api := toxiproxytest.Start(t) // skips without the binary; fails under CI=true
	w, err := workloads.Parse("tiny.yaml", []byte(strings.Replace(interruptWorkload,
		"  - {name: cut, toxic: idle_timeout, attributes: {timeout: 40}, at: 200ms, for: 200ms}\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	w.Toxiproxy = api
	server := toxiclient.NewClient(strings.TrimPrefix(api, "http://"))
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	for i := range 8 {
		out := filepath.Join(dir, "r"+string(rune('a'+i))+".json")
		after := time.Duration(rng.Int64N(int64(1800 * time.Millisecond)))
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(after, cancel) // the interrupt itself, not a synchronisation
		runErr := runWorkload(ctx, w, runFlags{out: out, progress: "off", quiet: true, formats: "none"}, io.Discard, io.Discard)
		interrupted := !timer.Stop()
		cancel()
		if runErr != nil && (!interrupted || exitCode(runErr) != exitInterrupted) {
			t.Errorf("run %d (interrupt after %v): %v (exit %d), want interrupted", i, after, runErr, exitCode(runErr))
		}
		if _, err := os.Stat(out); err == nil {
			if _, err := results.ReadFile(out); err != nil {
				t.Errorf("run %d: export does not read: %v", i, err)
			}
		}
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
