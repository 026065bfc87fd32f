package tsworker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Install installs the worker into dir: the embedded script, package.json and lock, and the
// locked libraries by `npm ci` (npm's own output goes to out). It builds the installation in a
// directory beside dir and renames it into place once npm ci has succeeded, so that Locate
// never finds half an installation; one made before is replaced, but no directory holding
// anything else (replaceable). ctx bounds npm.
func Install(ctx context.Context, dir string, out io.Writer) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("npm is not installed (apt-get install npm): it installs the TypeScript libraries")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := replaceable(dir); err != nil { // before npm runs; again before the rename
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("installing the TypeScript libraries: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".tsworker-install-*")
	if err != nil {
		return fmt.Errorf("installing the TypeScript libraries: %w", err)
	}
	defer os.RemoveAll(tmp) // after the rename below: nothing left, or what a failure left
	for _, name := range []string{Script, "package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(tmp, name), embedded(name), 0o644); err != nil {
			return fmt.Errorf("installing the TypeScript libraries: %w", err)
		}
	}
	npm := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	npm.Dir, npm.Stdout, npm.Stderr = tmp, out, out
	if err := npm.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w (its output is above)", tmp, err)
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replacing the installation in %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("installing the TypeScript libraries into %s: %w", dir, err)
	}
	return nil
}

// Installed says which version of each library an installation in dir holds ("" for one it
// lacks), as node would load it.
func Installed(dir string) map[string]string {
	out := map[string]string{}
	for _, lib := range []string{"sdk", "client"} {
		out[Package(lib)] = packageVersion(filepath.Join(dir, "node_modules", Package(lib), "package.json"))
	}
	return out
}

// replaceable refuses to replace a directory that holds anything but an installation (a source
// checkout's clients/tsworker, a directory of the user's): only a new or empty one, or one
// holding the script, package.json, the lock and node_modules, is replaced.
func replaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("installing the TypeScript libraries into %s: %w", dir, err)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == Script, n == "package.json", n == "package-lock.json", n == "node_modules":
		case strings.HasPrefix(n, ".worker-"): // a script being written by a run (writeScript)
		default:
			return fmt.Errorf("%s holds %s, which is not an installation's: give a new or empty directory (--dir), or remove it", dir, n)
		}
	}
	return nil
}
