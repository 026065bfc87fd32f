package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/hostile"
)

// If Toxiproxy itself cannot answer (a toxiproxy-server frozen mid-run, SIGSTOP), the run says
// so: the fault it could not apply, that Toxiproxy did not answer, and which connections were
// stalled on their clients (none here: our clients read), and it exits non-zero with an export.
func TestRunSaysToxiproxyDidNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of about 10 s")
	}
	api, pid := frozenToxiproxy(t)
	h := hostile.New(t)
	dir := t.TempDir()
	// Freeze the server once the run has made its group's proxy (groupProxy: before the first
	// fault, 2.5 s into the run, after every step of the set-up).
	frozen := make(chan struct{})
	go func() {
		defer close(frozen)
		_, _ = groupProxy(api)
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}()
	out := runCmd(t, dir, "run", filepath.Join("testdata", "toxiproxy-frozen.yaml"), "--target", h.URL("get-405"), "--toxiproxy", api,
		"--progress", "off", "--out", filepath.Join(dir, "r.json"))
	<-frozen
	_ = syscall.Kill(pid, syscall.SIGCONT)
	for _, want := range []string{"fault cut: abandoned: Toxiproxy did not answer in time", "Toxiproxy itself did not answer"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q", want)
		}
	}
	if !strings.Contains(out, "mcpchaos:") {
		t.Errorf("the run ended without an error")
	}
}
