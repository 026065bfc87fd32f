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
// timer of o.SessionTTL per session; with o.EventStoreMaxAge the store forgets events that old.
// Its npm packages must be installed in
// internal/peers/ts/node_modules (`npm ci` there; .ci/run does it). Without node or the
// packages, the test fails under CI=true and is skipped otherwise, saying why.
func TS(t testing.TB, o Options) *Server {
	t.Helper()
	return tsServer(t, o, "ts-sdk", 404)
}

// TS400 is TS answering 400 (a JSON-RPC error "No valid session ID provided") to a request
// naming an unknown or expired session, as the SDK's older examples and the servers built on
// them do, instead of the 404 the spec asks for.
func TS400(t testing.TB, o Options) *Server {
	t.Helper()
	return tsServer(t, o, "ts-sdk-400", 400)
}

func tsServer(t testing.TB, o Options, name string, deadStatus int) *Server {
	t.Helper()
	dir := peerDir("ts")
	needNode(t, dir, "@modelcontextprotocol/sdk")
	u := startNode(t, dir, nil, "", "server.mjs",
		"--ttl", strconv.FormatInt(o.SessionTTL.Milliseconds(), 10),
		"--notify", strconv.FormatInt(o.Notify.Milliseconds(), 10),
		"--dead-status", strconv.Itoa(deadStatus),
		"--evict-after", strconv.FormatInt(o.EventStoreMaxAge.Milliseconds(), 10))
	statsURL := strings.TrimSuffix(u, "/mcp") + "/stats"
	return &Server{Name: name, URL: u, stats: func() Stats {
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

// needNode checks that node and the npm package pkg (installed in dir/node_modules) are there:
// without them the test fails under CI=true and is skipped otherwise, naming what is missing.
func needNode(t testing.TB, dir, pkg string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not installed (apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
		missing(t, pkg+" is not installed: run `npm ci` in "+dir)
	}
}

// startNode runs `node script args...` in dir with env added, until the test ends, and returns
// the URL it prints (startProcess).
func startNode(t testing.TB, dir string, env []string, prefix, script string, args ...string) string {
	t.Helper()
	node, _ := exec.LookPath("node")
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return startProcess(t, cmd, prefix, "node "+script)
}

// startProcess starts cmd until the test ends and returns the URL it prints: its first line,
// or with prefix set, the rest of the first line that starts with prefix. The process ends
// when its stdin closes (every peer here exits then); if it has not within 5 s, the test kills
// it, by its own handle. what names it in failures; PEER_DEBUG=1 shows its stderr.
func startProcess(t testing.TB, cmd *exec.Cmd, prefix, what string) string {
	t.Helper()
	cmd.Stderr = io.Discard
	if os.Getenv("PEER_DEBUG") != "" {
		cmd.Stderr = os.Stderr
	}
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
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill() // the process this test started, by its handle
			<-exited
		}
	})
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			s, err := r.ReadString('\n')
			if u, ok := strings.CutPrefix(strings.TrimSpace(s), prefix); ok {
				line <- strings.TrimSpace(u)
				break
			}
			if err != nil {
				line <- ""
				return
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var u string
	select {
	case u = <-line:
	case <-time.After(30 * time.Second): // node starts slowly on a loaded machine
		t.Fatalf("%s printed no URL within 30s", what)
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("%s printed %q, not its loopback URL", what, u)
	}
	return u
}

// missing fails the test under CI (where .ci/run installs everything) and skips it elsewhere.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// peerDir is internal/peers/NAME in the source tree.
func peerDir(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), name)
}
