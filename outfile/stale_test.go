package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A link planted under the marker's name is refused before any work and never written
// through, even by root; a marker an earlier run left is replaced.
func TestMarkerNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := companions(filepath.Join(dir, "r.json"))
	if err := os.Symlink(victim, Marker(set.Export)); err != nil {
		t.Fatal(err)
	}
	for name, step := range map[string]func() error{"Check": set.Check, "Begin": set.Begin} {
		if err := step(); err == nil || !strings.Contains(err.Error(), "is not a marker of mcpchaos (it is a symbolic link)") {
			t.Errorf("%s with a link as the marker: %v", name, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target now reads %q", b)
	}
	if fi, err := os.Lstat(Marker(set.Export)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was changed: %v", err)
	}

	other := companions(filepath.Join(dir, "s.json"))
	if err := os.WriteFile(Marker(other.Export), []byte("an earlier run's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := other.Check(); err != nil {
		t.Fatal(err)
	}
	if err := other.Begin(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(Marker(other.Export)); !strings.Contains(string(b), "being written") {
		t.Errorf("the marker reads %q", b)
	}
}

// The temporaries an earlier run left (cut short by a second signal) are removed when a set is
// checked again: only the tool's own, by their exact names, never through a link, never a
// temporary a writer running now may hold.
func TestCleanRemovesOnlyStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	in := func(n string) string { return filepath.Join(dir, n) }
	victim := in("victim.hgrm")
	mk := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(in(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in(name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("victim.hgrm", "precious")
	stale := []string{".r.json.tmp-123", ".r.csv.tmp-45", ".r.junit.xml.tmp-6", ".r.hgrm.tmp-789", ".r.hgrm.old-1011"}
	mk(".r.json.tmp-123", "half an export")
	mk(".r.csv.tmp-45", "half a csv")
	mk(".r.junit.xml.tmp-6", "half a junit")
	mk(".r.hgrm.tmp-789/a.hgrm", "half")
	mk(".r.hgrm.old-1011/r.hgrm/b.hgrm", "old")
	kept := []string{".r.json.tmp-abc", ".r.json.tmp-", ".r.hgrm.tmp-55", ".r.json.tmp-999", ".x.json.tmp-1"}
	mk(".r.json.tmp-abc", "not a temporary's name")
	mk(".r.json.tmp-", "not a temporary's name")
	mk(".r.hgrm.tmp-55/notes.txt", "someone's notes")
	if err := os.Symlink(victim, in(".r.json.tmp-999")); err != nil {
		t.Fatal(err)
	}
	mk(".x.json.tmp-1", "another export's")
	old := processStart.Add(-time.Hour)
	ts := []unix.Timespec{unix.NsecToTimespec(old.UnixNano()), unix.NsecToTimespec(old.UnixNano())}
	for _, n := range append(append([]string{}, stale...), kept...) {
		// The entry's own times (the link's, not its target's).
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, in(n), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	mk(".r.json.tmp-2", "a writer's, running now") // newer than this process: not stale
	kept = append(kept, ".r.json.tmp-2")
	set := companions(in("r.json"))
	if err := set.Check(); err != nil {
		t.Fatal(err)
	}
	if err := set.Clean(); err != nil {
		t.Fatal(err)
	}
	for _, n := range stale {
		if _, err := os.Lstat(in(n)); err == nil {
			t.Errorf("%s is still there", n)
		}
	}
	for _, n := range kept {
		if _, err := os.Lstat(in(n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the victim reads %q", b)
	}
}
