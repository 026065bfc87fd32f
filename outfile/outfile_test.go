package outfile

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteReplacesRegularFileAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "r.json")
	if err := Write(p, nil, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, nil, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "two" {
		t.Fatalf("content %q", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: the file's permissions were not kept", fi.Mode())
	}
	// A failing write leaves the old file and no temporary file.
	err := WriteWith(p, nil, func(w io.Writer) error {
		io.WriteString(w, "half")
		return io.ErrUnexpectedEOF
	})
	if err == nil || read(t, p) != "two" {
		t.Fatalf("failed write: err %v, content %q", err, read(t, p))
	}
	if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// /dev/null stays the device it is: written to, never replaced (the tool runs as root).
func TestWriteDeviceNode(t *testing.T) {
	before, err := os.Stat(os.DevNull)
	if err != nil {
		t.Skip("no /dev/null here")
	}
	if err := Check(os.DevNull); err != nil {
		t.Fatalf("Check(/dev/null): %v", err)
	}
	if err := Write(os.DevNull, nil, []byte("export\n")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(os.DevNull)
	if err != nil || after.Mode()&fs.ModeCharDevice == 0 || !os.SameFile(before, after) {
		t.Fatalf("/dev/null after the write: %v, %v", after.Mode(), err)
	}
	if !IsDirect(os.DevNull) {
		t.Error("IsDirect(/dev/null) = false")
	}
}

func TestWriteFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := Check(p); err != nil {
		t.Fatalf("Check(fifo): %v", err)
	}
	// Nobody reads it: an error at once, not a wait without end.
	if err := Write(p, nil, []byte("x")); err == nil || !strings.Contains(err.Error(), "no process reads") {
		t.Fatalf("writing a FIFO nobody reads: %v", err)
	}
	// A reader (opened without waiting for a writer): the data goes through the pipe, whose
	// buffer holds it until read.
	r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write(p, nil, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != "through the pipe" {
		t.Fatalf("read %q, %v", b, err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

// A symlink is followed: its target is replaced (atomically) and the link stays a link.
func TestWriteSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real", "r.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real/r.json", link); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "chain.json") // a link to a link
	os.Symlink(link, chain)
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("real/new.json", dangling)
	for _, p := range []string{link, chain, dangling} {
		if err := Check(p); err != nil {
			t.Fatalf("Check(%s): %v", p, err)
		}
		if err := Write(p, nil, []byte("new "+filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a link: %v %v", p, fi.Mode(), err)
		}
		if got := read(t, p); got != "new "+filepath.Base(p) {
			t.Errorf("%s reads %q", p, got)
		}
	}
	if got := read(t, filepath.Join(dir, "real", "new.json")); got != "new dangling.json" {
		t.Errorf("the dangling link's target reads %q", got)
	}
	if !Same(link, target) || !Same(chain, target) {
		t.Error("Same does not follow links")
	}
}

func TestWriteStdout(t *testing.T) {
	var buf bytes.Buffer
	if err := Check("-"); err != nil {
		t.Fatal(err)
	}
	if err := Write("-", &buf, []byte("to stdout")); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "to stdout" {
		t.Fatalf("stdout got %q", buf.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was made")
	}
}

// What cannot be written is refused before any work, with the reason.
func TestCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		path, want string
	}{
		{dir, "is a directory"},
		{filepath.Join(dir, "file", "r.json"), "not a directory"},
		{filepath.Join(dir, "file", "deeper", "r.json"), "not a directory"},
		{"", "empty"},
	}
	// A directory that takes no new file, even from root: /proc.
	if fi, err := os.Stat("/proc/self"); err == nil && fi.IsDir() {
		cases = append(cases, struct{ path, want string }{"/proc/r.json", "takes no new file"})
	}
	// Permission bits, where they count (not for root, whom only a read-only mount stops).
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		cases = append(cases, struct{ path, want string }{filepath.Join(ro, "r.json"), "permission denied"})
	}
	link := filepath.Join(dir, "linkdir")
	os.Symlink(dir, link)
	cases = append(cases, struct{ path, want string }{link, "a link to"})
	for _, c := range cases {
		err := Check(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%q) = %v, want an error saying %q", c.path, err, c.want)
		}
		if werr := Write(c.path, nil, []byte("x")); werr == nil {
			t.Errorf("Write(%q) succeeded", c.path)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link to a directory was replaced")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}
