package workloads

import (
	"strings"
	"testing"
)

// A workload changed in Go is another experiment than its file's: a run names it so, and the
// same change gives the same hash (shards of one Go program merge); an unchanged one keeps its
// file's identity.
func TestAsRunNamesAWorkloadChangedInGo(t *testing.T) {
	w, err := Builtin("seed-incident-fast")
	if err != nil {
		t.Fatal(err)
	}
	if w.ChangedInGo() || w.AsRun() != w {
		t.Fatal("a workload as its file gave it counts as changed")
	}
	change := func() *Workload {
		c, _ := Builtin("seed-incident-fast")
		c.Groups[0].Clients = 5
		return c
	}
	a, b := change().AsRun(), change().AsRun()
	if !strings.HasSuffix(a.Source, " (changed in Go)") || a.Hash == w.Hash || !strings.HasPrefix(a.Hash, "sha256:") {
		t.Errorf("changed: source %q hash %q (the file's %q)", a.Source, a.Hash, w.Hash)
	}
	if a.Hash != b.Hash {
		t.Errorf("the same change gave two hashes: %s, %s", a.Hash, b.Hash)
	}
	if again := a.AsRun(); again.Source != a.Source || again.Hash != a.Hash {
		t.Errorf("named twice: %q %q", again.Source, again.Hash)
	}
	if err := a.Validate(); err != nil {
		t.Errorf("a named workload no longer validates: %v", err)
	}
	if (&Workload{}).AsRun().Source != "go" {
		t.Error("a workload built in Go from nothing is not named as such")
	}
}
