package workloads

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad checks that no input makes the reader panic or hang, and that its
// answer is always either a workload that keeps the promises the runner
// relies on, or positioned errors. `go test` runs the seeds: the builtins
// and the broken files in testdata.
func FuzzLoad(f *testing.F) {
	for _, name := range BuiltinNames() {
		data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	broken, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(broken) == 0 {
		f.Fatalf("no seeds in testdata: %v", err)
	}
	for _, path := range broken {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(""))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse("fuzz.yaml", data)
		if (w == nil) == (err == nil) {
			t.Fatalf("Parse returned workload %v and error %v; want exactly one", w, err)
		}
		if err != nil {
			checkErrors(t, err)
			return
		}
		checkWorkload(t, w)
	})
}

func checkErrors(t *testing.T, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errs) == 0 {
		t.Fatalf("error %T %v is not a non-empty *ValidationError", err, err)
	}
	for _, e := range ve.Errs {
		if e.File != "fuzz.yaml" || e.Line < 1 || e.Col < 1 || e.Msg == "" {
			t.Fatalf("badly positioned error %+v", e)
		}
		if strings.Contains(e.Msg, "internal error") {
			t.Fatalf("panic while parsing: %v", e)
		}
	}
}

func checkWorkload(t *testing.T, w *Workload) {
	t.Helper()
	if w.Name == "" || len(w.Phases) == 0 || len(w.Groups) == 0 || (w.Target.Builtin == nil) == (w.Target.URL == "") || w.Target.Builtin != nil && w.Target.SessionTTL <= 0 {
		t.Fatalf("incomplete workload %+v", w)
	}
	var end = w.Phases[0].Start
	for _, p := range w.Phases {
		if p.Start != end || p.Duration <= 0 {
			t.Fatalf("phases not laid end to end: %+v", w.Phases)
		}
		end = p.End()
	}
	if end != w.Duration {
		t.Fatalf("duration %s, phases end at %s", w.Duration, end)
	}
	groups := map[string]bool{}
	for _, g := range w.Groups {
		if !validName(g.Name) || groups[g.Name] || g.Clients < 1 || g.CallEvery <= 0 || len(g.DeadStatuses) == 0 {
			t.Fatalf("bad group %+v", g)
		}
		groups[g.Name] = true
	}
	names := map[string]bool{}
	for _, f := range w.Faults {
		if names[f.Name] || f.At < 0 || f.For < 0 || f.At >= w.Duration || f.Until(w.Duration) > w.Duration {
			t.Fatalf("bad fault %+v in a run of %s", f, w.Duration)
		}
		names[f.Name] = true
		for _, g := range f.Groups {
			if !groups[g] {
				t.Fatalf("fault %s names unknown group %s", f.Name, g)
			}
		}
	}
}

// The broken files in testdata must each fail, with every error positioned.
func TestBrokenFiles(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, path := range paths {
		_, err := Load(path)
		if err == nil {
			t.Errorf("%s loaded; want errors", path)
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %T %v", path, err, err)
			continue
		}
		for _, e := range ve.Errs {
			if e.File != path || e.Line < 1 || e.Col < 1 || strings.Contains(e.Msg, "internal error") || !strings.Contains(e.Msg, "; ") {
				t.Errorf("%s: bad error %v", path, e)
			}
		}
		if testing.Verbose() {
			t.Logf("%s:\n%v", path, err)
		}
	}
}

// A small file can reach one node many times through aliases; checking must
// stay proportional to the bounded expansion, not blow up with it (this one
// took 8s before nodes were checked once and group sets were used).
func TestAliasHeavyFileIsQuick(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-names: &names [")
	for i := range maxListLen {
		fmt.Fprintf(&b, "g%d, ", i)
	}
	b.WriteString("]\nx-bad: &bad {")
	for i := range 100 {
		fmt.Fprintf(&b, "junk%d: 1, ", i)
	}
	b.WriteString("policy: naive, clients: 1}\nname: hostile\ntarget: {builtin: {session_ttl: 1s}}\nphases: [{duration: 10s, calls: true}]\ngroups:\n")
	for i := range maxAliases / 2 { // the most aliases the tokenizer lets through
		fmt.Fprintf(&b, "  - {<<: *bad, name: g%d}\n", i)
	}
	b.WriteString("faults:\n")
	for i := range maxAliases / 2 {
		fmt.Fprintf(&b, "  - {toxic: down, at: 1s, groups: [g%d]}\n  - {toxic: down, at: 1s, groups: *names}\n", i)
	}
	// The work is bounded by what it allocates, which unlike its wall time does not depend on
	// how busy the machine is.
	alloc, err := parseAlloc(t, "fuzz.yaml", b.String())
	t.Logf("allocated %d MB", alloc>>20)
	if alloc > 256<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
	checkErrors(t, err)
	var ve *ValidationError
	if errors.As(err, &ve) && len(ve.Errs) != maxErrors+1 {
		t.Errorf("got %d errors, want %d and a line saying more were left out: %v", len(ve.Errs), maxErrors+1, err)
	}
	// One alias more and the file is refused before it is parsed.
	b.WriteString("x-more: *bad\n")
	_, err = Parse("fuzz.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d aliases", maxAliases)) {
		t.Errorf("%d aliases: %v", maxAliases+1, err)
	}
}
