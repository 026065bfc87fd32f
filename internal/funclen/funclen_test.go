package funclen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// limit is the house's: a function fits on a screen (docs/architecture.md).
const limit = 80

// over are the functions still longer than limit, with their length when listed: none may
// grow, and one that is split leaves this list (the test says so).
var over = map[string]int{
	"internal/hostile.(*Server).serve": 192, // one case per hostile behaviour
	"bench.Hold":                       89,
	"inspect.(*inspector).run":         89, // inspect's three: under another change
	"inspect.(*Fingerprint).judge":     87,
	"inspect.WriteTable":               85,
}

// The module's functions fit on a screen, but for those listed in over, none longer than it
// was when listed.
func TestFunctionsFitOnAScreen(t *testing.T) {
	long, err := Long(filepath.Join("..", ".."), limit)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range long {
		seen[f.Name] = true
		was, listed := over[f.Name]
		switch {
		case !listed:
			t.Errorf("%s:%d: %s is %d lines, over %d: split it (by what its parts do)", f.File, f.Line, f.Name, f.Lines, limit)
		case f.Lines > was:
			t.Errorf("%s:%d: %s grew to %d lines (listed at %d, already over %d): split it rather", f.File, f.Line, f.Name, f.Lines, was, limit)
		}
	}
	for name := range over {
		if !seen[name] {
			t.Errorf("%s fits in %d lines now (or is gone): take it off the list in funclen_test.go", name, limit)
		}
	}
}

// Long finds a function over the limit, names a method by its receiver, and leaves tests out.
func TestLong(t *testing.T) {
	dir := t.TempDir()
	body := "\tx := 0\n" + strings.Repeat("\tx++\n", 10) + "\t_ = x\n"
	src := "package p\n\nfunc short() {\n" + body + "}\n\ntype T struct{}\n\nfunc (*T) long() {\n" + body + body + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc longTest() {\n"+body+body+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Long(dir, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "(*T).long" || got[0].Lines != 26 || got[0].Line != 20 || got[0].File != "p.go" {
		t.Errorf("Long = %+v, want only (*T).long, 26 lines at p.go:20", got)
	}
}

// A tree that does not parse is an error naming the file, not a short list.
func TestLongRefusesBrokenGo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte("package p\nfunc {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Long(dir, 80); err == nil || !strings.Contains(err.Error(), "bad.go") {
		t.Errorf("err = %v, want one naming bad.go", err)
	}
}
