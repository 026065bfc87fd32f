package tsworker

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed worker.mjs package.json package-lock.json
var files embed.FS

// Script is the worker's file name in its directory.
const Script = "worker.mjs"

// EnvDir names the environment variable that points to a directory holding the libraries
// (node_modules, as `npm ci` against this package's lock leaves it); it is searched alone.
const EnvDir = "MCPCHAOS_TS_WORKER_DIR"

// embedded returns one of the embedded files; they are there by construction.
func embedded(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("tsworker: " + name + " is not embedded: " + err.Error())
	}
	return b
}

// Version names what the binary carries (the script and the lock, hashed): an installation
// made for another binary's worker is another directory.
func Version() string {
	h := sha256.New()
	for _, name := range []string{Script, "package.json", "package-lock.json"} {
		h.Write(embedded(name))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// InstallDir is where `mcpchaos setup ts-libraries` installs by default: $MCPCHAOS_TS_WORKER_DIR
// if set, else <user cache dir>/mcpchaos/tsworker-<Version> (~/.cache/... on Linux).
func InstallDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory to install the TypeScript libraries in (%w); set %s to a directory", err, EnvDir)
	}
	return filepath.Join(cache, "mcpchaos", "tsworker-"+Version()), nil
}

// Package is the npm package of a TypeScript library the worker runs: "sdk" (ts-sdk, 1.x) or
// "client" (ts-client, 2.x).
func Package(lib string) string { return "@modelcontextprotocol/" + lib }

// Locate returns the directory the worker of lib ("sdk" or "client") runs in, with the
// binary's script written there, or an error that says what to run. It looks in
// $MCPCHAOS_TS_WORKER_DIR alone when that is set, else in InstallDir and in a tsworker
// directory beside the binary.
func Locate(lib string) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("node is not installed (apt-get install nodejs, 20 or later)")
	}
	var dirs []string
	if d := os.Getenv(EnvDir); d != "" {
		dirs = []string{d}
	} else {
		if d, err := InstallDir(); err == nil {
			dirs = append(dirs, d)
		}
		if exe, err := os.Executable(); err == nil {
			dirs = append(dirs, filepath.Join(filepath.Dir(exe), "tsworker"))
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "node_modules", Package(lib), "package.json")); err != nil {
			continue
		}
		if err := writeScript(d); err != nil {
			return "", err
		}
		return d, nil
	}
	return "", &NotInstalledError{Package: Package(lib), Searched: dirs}
}

// NotInstalledError is a TypeScript library found nowhere Locate looks.
type NotInstalledError struct {
	Package  string
	Searched []string
}

func (e *NotInstalledError) Error() string {
	if os.Getenv(EnvDir) != "" {
		return fmt.Sprintf("the TypeScript libraries are not installed in %s=%s: run `mcpchaos setup ts-libraries` (npm ci there), or unset %s",
			EnvDir, os.Getenv(EnvDir), EnvDir)
	}
	where := "the user's cache directory"
	if d, err := InstallDir(); err == nil {
		where = d
	}
	return fmt.Sprintf("the TypeScript libraries are not installed: run `mcpchaos setup ts-libraries` (npm ci into %s), or set %s to where they are", where, EnvDir)
}

// writeScript puts the binary's worker script in dir, unless the same one is there already
// (an installation is shared by runs at once: the file is replaced whole, by a rename).
func writeScript(dir string) error {
	want := embedded(Script)
	path := filepath.Join(dir, Script)
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
		return nil
	}
	tmp, err := os.CreateTemp(dir, ".worker-*.mjs")
	if err != nil {
		return fmt.Errorf("writing the node worker's script into %s: %w; run `mcpchaos setup ts-libraries`, or set %s to a directory you may write", dir, err, EnvDir)
	}
	_, err = tmp.Write(want)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the node worker's script into %s: %w", dir, err)
	}
	return nil
}

// packageVersion is the version a package.json says, "" when there is none to read.
func packageVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}
