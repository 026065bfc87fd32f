package peers

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TS starts the TypeScript SDK server of ts/server.mjs under the machine's node: one McpServer
// and StreamableHTTPServerTransport per session, an event store kept in order, and an idle
// timer of o.SessionTTL per session. Its npm packages must be installed in
// internal/peers/ts/node_modules (`npm ci` there; .ci/run does it). Without node or the
// packages, the test fails under CI=true and is skipped otherwise, saying why.
func TS(t testing.TB, o Options) *Server {
	t.Helper()
	dir := tsDir()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed (apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing(t, "the TypeScript SDK is not installed: run `npm ci` in "+dir)
	}
	cmd := exec.Command(node, "server.mjs",
		"--ttl", strconv.FormatInt(o.SessionTTL.Milliseconds(), 10),
		"--notify", strconv.FormatInt(o.Notify.Milliseconds(), 10))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close() // the server exits when its stdin ends
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill() // the process this test started, by its handle
			<-exited
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var u string
	select {
	case u = <-line:
	case <-time.After(30 * time.Second): // node starts slowly on a loaded machine
		t.Fatal("the TypeScript SDK server printed no URL within 30s")
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("the TypeScript SDK server printed %q, not its URL", u)
	}
	statsURL := strings.TrimSuffix(u, "/mcp") + "/stats"
	return &Server{Name: "ts-sdk", URL: u, stats: func() Stats {
		var s Stats
		resp, err := http.Get(statsURL)
		if err != nil {
			return Stats{Unanswered: -1}
		}
		defer resp.Body.Close()
		if json.NewDecoder(resp.Body).Decode(&s) != nil {
			return Stats{Unanswered: -1}
		}
		return s
	}}
}

// missing fails the test under CI (where .ci/run installs everything) and skips it elsewhere.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// tsDir is internal/peers/ts in the source tree.
func tsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "ts")
}
