// Package mcpgoworker is the worker that holds mcp-go v1.6.0's clients for fleet's mcpgo-v1.6
// kind, and its Go side. mcpchaos's module requires mcp-go v1.2.1 (the mcpgo kind, in
// process), and one module cannot require two versions of one module: v1.6.0 is built apart,
// from worker/main.go (kept out of this module by its build constraint) and worker.mod /
// worker.sum (its go.mod and go.sum, named so that this directory stays in mcpchaos's module).
// The three are embedded in the binary; `mcpchaos setup go-libraries` (Install) builds them with
// the machine's go into InstallDir, as `setup ts-libraries` installs the TypeScript ones with
// npm. The worker speaks clients/tsworker's JSON-lines protocol, so fleet's libdriver pools
// it and routes its HTTP through the same gateway as the node workers (Start returns a
// tsworker.Worker).
package mcpgoworker

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcpchaos/mcpchaos/clients/tsworker"
)

//go:embed worker/main.go worker.mod worker.sum
var files embed.FS

// Version is the mcp-go version worker.mod pins.
const Version = "v1.6.0"

// Binary is the worker's file name in its directory.
const Binary = "mcpgo-worker"

// EnvDir names the environment variable that points to a directory holding a built worker; it
// is searched alone.
const EnvDir = "MCPCHAOS_GO_WORKER_DIR"

// sources are the embedded files and the names they are built under.
var sources = [][2]string{{"worker/main.go", "main.go"}, {"worker.mod", "go.mod"}, {"worker.sum", "go.sum"}}

func embedded(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("mcpgoworker: " + name + " is not embedded: " + err.Error())
	}
	return b
}

// Hash names what the binary carries (the source and its module files, hashed): a worker built
// for another binary's source is in another directory.
func Hash() string {
	h := sha256.New()
	for _, s := range sources {
		h.Write(embedded(s[0]))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// InstallDir is where `mcpchaos setup go-libraries` builds by default: $MCPCHAOS_GO_WORKER_DIR if
// set, else <user cache dir>/mcpchaos/mcpgoworker-<Hash>.
func InstallDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory to build mcp-go %s's worker in (%w); set %s to a directory", Version, err, EnvDir)
	}
	return filepath.Join(cache, "mcpchaos", "mcpgoworker-"+Hash()), nil
}

// Locate returns the path of the built worker, or an error that says what to run.
func Locate() (string, error) {
	var dirs []string
	if d := os.Getenv(EnvDir); d != "" {
		dirs = []string{d}
	} else {
		if d, err := InstallDir(); err == nil {
			dirs = append(dirs, d)
		}
		if exe, err := os.Executable(); err == nil {
			dirs = append(dirs, filepath.Join(filepath.Dir(exe), "mcpgoworker"))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, Binary)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	where := strings.Join(dirs, ", ")
	return "", fmt.Errorf("mcp-go %s's worker is not built (looked in %s): run `mcpchaos setup go-libraries` (go build into the first), or set %s to where it is", Version, where, EnvDir)
}

// Check says what is missing to run the mcpgo-v1.6 kind, or nil.
func Check(kind string) error {
	if _, err := Locate(); err != nil {
		return fmt.Errorf("policy %s runs mcp-go %s in a worker process: %w", kind, Version, err)
	}
	return nil
}

// Start starts a worker and waits for its hello.
func Start(ctx context.Context, kind string) (*tsworker.Worker, error) {
	exe, err := Locate()
	if err != nil {
		return nil, fmt.Errorf("policy %s runs mcp-go %s in a worker process: %w", kind, Version, err)
	}
	cmd := exec.Command(exe)
	cmd.Dir = filepath.Dir(exe)
	return tsworker.StartCommand(ctx, cmd, "mcp-go "+Version+" worker")
}

// Install builds the worker into dir with the machine's go (its output goes to out): the
// embedded source and module files are written into a directory beside dir, built there with
// the module proxy's mcp-go (checked against the embedded go.sum), and renamed into place once
// the build has succeeded, so that Locate never finds half a build. ctx bounds go.
func Install(ctx context.Context, dir string, out io.Writer) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("go is not installed (https://go.dev/dl): it builds mcp-go %s's worker", Version)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("building mcp-go %s's worker: %w", Version, err)
	}
	tmp, err := os.MkdirTemp(parent, ".mcpgoworker-build-*")
	if err != nil {
		return fmt.Errorf("building mcp-go %s's worker: %w", Version, err)
	}
	defer os.RemoveAll(tmp)
	for _, s := range sources {
		if err := os.WriteFile(filepath.Join(tmp, s[1]), embedded(s[0]), 0o644); err != nil {
			return fmt.Errorf("building mcp-go %s's worker: %w", Version, err)
		}
	}
	build := exec.CommandContext(ctx, gobin, "build", "-trimpath", "-mod=readonly", "-tags", "mcpgoworker", "-o", Binary, ".")
	build.Dir, build.Stdout, build.Stderr = tmp, out, out
	// The worker is a module of its own: no workspace or flags of the caller's apply to it.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build of mcp-go %s's worker in %s: %w (its output is above)", Version, tmp, err)
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replacing the worker in %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("installing mcp-go %s's worker into %s: %w", Version, dir, err)
	}
	return nil
}

// replaceable refuses to replace a directory that holds anything but a build of the worker.
func replaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("building mcp-go %s's worker into %s: %w", Version, dir, err)
	}
	for _, e := range entries {
		switch n := e.Name(); n {
		case Binary, "main.go", "go.mod", "go.sum":
		default:
			return fmt.Errorf("%s holds %s, which is not a build of the worker: give a new or empty directory (--dir), or remove it", dir, n)
		}
	}
	return nil
}
