package hlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The logs go beside the export or into the directory given; an export to stdout needs the
// directory; a directory holding other files than .hlog ones is refused.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	if got := Dir(out, ""); got != filepath.Join(dir, "run.hlog") {
		t.Errorf("Dir beside = %s", got)
	}
	if err := Check(out, ""); err != nil {
		t.Errorf("beside a new export: %v", err)
	}
	if err := Check("-", ""); err == nil || !strings.Contains(err.Error(), "give --hlog-dir DIR") {
		t.Errorf("export to stdout without a directory: %v", err)
	}
	if err := Check("-", filepath.Join(dir, "logs")); err != nil {
		t.Errorf("export to stdout, logs in a directory: %v", err)
	}
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(out, other); err == nil {
		t.Error("a directory holding notes.txt would be replaced whole")
	}
}
