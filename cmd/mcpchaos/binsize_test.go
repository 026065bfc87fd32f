package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// maxBinaryBytes is issue 17's limit: "the binary stays under 40 MB" (decimal), built plainly,
// as a user builds it (no -ldflags -s -w, no trimming). A new dependency that links megabytes
// (go-redis linked 11 MB before redigo replaced it) fails here, where it can still be weighed.
const maxBinaryBytes = 40_000_000

// One plain go build of this command, then its size. The packages it needs are in the build
// cache after any other build of the tree, so this is mostly one link (seconds); -short skips it.
func TestBinaryUnder40MB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not under -short")
	}
	out := filepath.Join(t.TempDir(), "mcpchaos")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// go test puts its own GOROOT/bin first on PATH: this is the go command running the test.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s ./cmd/mcpchaos: %v\n%s", out, err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plain go build: %d bytes (limit %d)", fi.Size(), maxBinaryBytes)
	if fi.Size() >= maxBinaryBytes {
		t.Errorf("mcpchaos is %d bytes, over issue 17's limit of %d (40 MB): `go tool nm -size -sort size` on it names what grew",
			fi.Size(), maxBinaryBytes)
	}
}
