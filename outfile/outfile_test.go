package outfile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	// Nobody reads it: refused when checked, before any work.
	if err := Check(p); err == nil || !strings.Contains(err.Error(), "no process reads this FIFO") {
		t.Fatalf("Check of a FIFO nobody reads: %v", err)
	}
	// A reader (opened without waiting for a writer): Check opens the FIFO and holds it, so
	// the reader sees no end of file before the write; the data goes through the pipe.
	r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Check(p); err != nil {
		t.Fatalf("Check(fifo): %v", err)
	}
	r.SetReadDeadline(time.Unix(1, 0)) // read what is there now: nothing, and no end of file
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("between Check and Write the reader got %d bytes, %v; want it still waiting", n, err)
	}
	r.SetReadDeadline(time.Time{})
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

// A FIFO whose reader never reads, or stops reading, cannot hold the write: it ends within
// Stall, or at once on a signal (the context), and the whole content goes beside the FIFO.
func TestWriteFIFOBounded(t *testing.T) {
	export := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, 16 times a pipe's buffer
	for _, tc := range []struct {
		name, want string
		stall      time.Duration
		cancelled  bool // the context ends once the pipe's buffer is full
		closed     bool // the reader goes away
	}{
		{"a reader that never reads", "nothing read it for", 50 * time.Millisecond, false, false},
		{"a signal", "interrupted by a signal", time.Hour, true, false},
		{"a reader that closes", "its reader closed it", time.Hour, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(s time.Duration) { Stall = s }(Stall)
			Stall = tc.stall
			dir := t.TempDir()
			p := filepath.Join(dir, "out.json")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := Check(p); err != nil {
				t.Fatal(err)
			}
			if tc.closed {
				r.Close()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			err = WriteWithContext(ctx, p, nil, func(w io.Writer) error {
				calls++
				if tc.cancelled && calls == 1 {
					if _, err := w.Write(export[:64<<10]); err != nil { // fills the pipe
						return err
					}
					cancel()
				}
				_, err := w.Write(export)
				return err
			})
			var d *Diverted
			if !errors.As(err, &d) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want the export diverted because %q", err, tc.want)
			}
			want := filepath.Join(dir, "out.unread.json")
			if d.To != want {
				t.Fatalf("diverted to %q, want %q", d.To, want)
			}
			if b, err := os.ReadFile(want); err != nil || !bytes.Equal(b, export) {
				t.Fatalf("the diverted file holds %d bytes (%v), want the whole export of %d", len(b), err, len(export))
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Fatalf("the FIFO was replaced: %v %v", fi.Mode(), err)
			}
		})
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
