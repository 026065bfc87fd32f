package tsworker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
	}
}

// Without the libraries, Locate names what to run, wherever it looked.
func TestLocateSaysWhatToRun(t *testing.T) {
	needNode(t)
	t.Setenv(EnvDir, t.TempDir())
	_, err := Locate("sdk")
	var ni *NotInstalledError
	if !errors.As(err, &ni) || !strings.Contains(err.Error(), "run `mcpchaos setup ts-libraries`") || !strings.Contains(err.Error(), EnvDir) {
		t.Fatalf("Locate in an empty %s: %v", EnvDir, err)
	}
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	want, _ := InstallDir()
	if _, err := Locate("client"); !errors.As(err, &ni) || !strings.Contains(err.Error(), "mcpchaos setup ts-libraries") || !strings.Contains(err.Error(), want) {
		t.Fatalf("Locate with nothing installed: %v, want the command and %s", err, want)
	}
}

// The install directory is named by what the binary carries, under the user's cache.
func TestInstallDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", cache)
	d, err := InstallDir()
	if err != nil || d != filepath.Join(cache, "mcpchaos", "tsworker-"+Version()) || len(Version()) != 12 {
		t.Fatalf("InstallDir = %q, %v", d, err)
	}
	t.Setenv(EnvDir, "/opt/ts")
	if d, _ := InstallDir(); d != "/opt/ts" {
		t.Fatalf("InstallDir with %s set = %q", EnvDir, d)
	}
}

// The script run is the binary's: written where there is none or another one, left alone
// where it is the same.
func TestWriteScript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Script)
	if err := os.WriteFile(path, []byte("// an older worker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeScript(dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, embedded(Script)) {
		t.Fatal("the older script stayed")
	}
	fi, _ := os.Stat(path)
	if err := os.Chmod(dir, 0o555); err != nil { // the same script in a read-only place is fine
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if err := writeScript(dir); err != nil {
		t.Fatalf("the same script in a read-only directory: %v", err)
	}
	if fi2, _ := os.Stat(path); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("the same script was written again")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// The command's install, for real: npm ci against the embedded lock (npm's cache makes it
// quick where it ran before), then a node worker of each library started from it says hello
// with the locked version. It reaches the npm registry when its cache lacks a package.
func TestInstallThenLocate(t *testing.T) {
	if testing.Short() {
		t.Skip("npm ci: not under -short")
	}
	needNode(t)
	dir := filepath.Join(t.TempDir(), "ts")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := Install(ctx, dir, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := Installed(dir)
	if got["@modelcontextprotocol/sdk"] != "1.32.2" || got["@modelcontextprotocol/client"] != "2.4.0" {
		t.Fatalf("installed %v, want the lock's versions", got)
	}
	if err := os.Remove(filepath.Join(dir, Script)); err != nil { // Locate writes it back
		t.Fatal(err)
	}
	t.Setenv(EnvDir, dir)
	for _, lib := range []string{"sdk", "client"} {
		d, err := Locate(lib)
		if err != nil || d != dir {
			t.Fatalf("Locate(%s) = %q, %v", lib, d, err)
		}
		// The worker says hello, then exits when its stdin ends.
		node := exec.CommandContext(ctx, "node", Script, "--library", lib)
		node.Dir = d
		node.Stdin = strings.NewReader("")
		hello, err := node.Output()
		if err != nil || !strings.Contains(string(hello), `"ev":"ready"`) || !strings.Contains(string(hello), got[Package(lib)]) {
			t.Fatalf("node worker of %s: %v: %s", lib, err, hello)
		}
	}
	parent, _ := os.ReadDir(filepath.Dir(dir))
	if len(parent) != 1 {
		t.Errorf("the install left %d entries beside it, want its directory alone", len(parent))
	}
}

// An installation replaces only an installation: a directory holding anything else (a source
// checkout, the user's files) is refused before npm runs, and left as it was.
func TestInstallRefusesADirectoryOfSomethingElse(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	for _, name := range []string{"worker.go", Script, "package.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := Install(context.Background(), dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "holds worker.go, which is not an installation's") {
		t.Fatalf("Install over a directory of other files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "worker.go")); err != nil || string(b) != "mine" {
		t.Fatalf("the directory changed: %q, %v", b, err)
	}
	if rest, _ := os.ReadDir(filepath.Dir(dir)); len(rest) != 1 {
		t.Errorf("the refused install left %d entries beside the directory", len(rest)-1)
	}
}
