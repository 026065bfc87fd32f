package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "run.json")
	for _, content := range []string{"first", "second"} {
		if err := Write(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Errorf("read %q, want %q", got, content)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// Not a regular file: refused, and left as it was.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink(target, link)
	for _, bad := range []string{link, filepath.Join(dir, "sub")} {
		if err := Write(bad, []byte("x")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want refused", bad, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("the symlink's target changed: %q", got)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
}
