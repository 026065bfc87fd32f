package mcpgoworker

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Where no worker is built, a run is told what to run and where it looked.
func TestLocateSaysWhatToRun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	_, err := Locate()
	if err == nil || !strings.Contains(err.Error(), "mcpchaos setup go-libraries") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Locate in an empty %s: %v", dir, err)
	}
}

// Install refuses a directory that holds something else than a build of the worker.
func TestInstallKeepsOtherDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Install(context.Background(), dir, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("Install over a user's directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Fatal("the user's file was touched")
	}
}

// The embedded source builds on its own (its go.sum is complete: -mod=readonly), and the
// worker says hello with the version worker.mod pins, then exits when its input ends.
func TestInstallBuildsAWorkerThatAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("go build of mcp-go")
	}
	dir := filepath.Join(t.TempDir(), "w")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := Install(ctx, dir, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Setenv(EnvDir, dir)
	w, err := Start(ctx, "mcpgo-v1.6")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(10 * time.Second)
	if w.Library() != "github.com/mark3labs/mcp-go" || w.Version() != Version {
		t.Fatalf("hello: %s %s, want github.com/mark3labs/mcp-go %s", w.Library(), w.Version(), Version)
	}
}
