package peers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/peers/mcpgopeer"
)

// The mcp-go peers run mcpgopeer's server in a process of their own, built without the race
// detector (mcpgopeer's package doc says why: a data race inside mcp-go v1.2.1's POST handler),
// started by the test and ended with it.

// MCPGo starts mark3labs/mcp-go's streamable server, stateful, with its in-memory event store
// and the idle TTL o.SessionTTL (its sweeper ends a session between TTL and TTL + max(TTL/2,
// 1s) after its last request). When a session ends, its events are purged with it; with
// o.EventStoreMaxAge, events that old are forgotten while their session lives.
func MCPGo(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go", o)
}

// MCPGoRetained is MCPGo with an event store whose log outlives the sessions: it is never
// purged when a session ends. After the TTL, a GET with Last-Event-ID answers 200 and replays
// the dead session's events, while a POST answers 404: the seed's regime, in a real SDK.
func MCPGoRetained(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go-retained", o)
}

// MCPGoStateless starts mcp-go's streamable server with server.WithStateLess(true): no
// Mcp-Session-Id at all (a valid 2025 server: ids are optional), every request served as a
// new session, and a GET without a session id answered 200 and held open. Like every mode of
// mcp-go v1.2.1 it also speaks the stateless 2026-07-28 revision to a client that asks for it
// (server/discover, subscriptions/listen): a 2025 client meets the session family.
func MCPGoStateless(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go-stateless", o)
}

// MCPGoIDs starts mcp-go's streamable server in its default mode: it hands out session ids
// but keeps no record of them (StatelessGeneratingSessionIdManager: any well-formed id is
// accepted), so a session it "ended" (the idle TTL o.SessionTTL) or never issued is served
// 200 as if alive: silent substitution.
func MCPGoIDs(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go-ids", o)
}

// MCPGoIDsStore is MCPGoIDs with mcp-go's in-memory event store: ids still never checked,
// but its streams carry event ids and a GET with Last-Event-ID replays, so a client holds
// cursors and resumes. A swept session's events are purged; its id is served on as new.
func MCPGoIDsStore(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go-ids-store", o)
}

// MCPGoHeartbeat is MCPGoIDs with mcp-go's heartbeat: a ping request on each session's GET
// stream every mcpgopeer.HeartbeatInterval (100 ms), a keepalive a client must answer.
func MCPGoHeartbeat(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go-heartbeat", o)
}

// MCPGoSortedStore starts mcp-go's stateful server (idle TTL o.SessionTTL) over one event
// store shared by all sessions, never purged, whose ids are "<stream>_<ms>_<random>" and whose
// replay walks them sorted as strings (the TypeScript SDK's example store, in Go): an event of
// the same millisecond may sort before the cursor. Its only tool, burst, sends three progress
// notifications at once when given a progress token; it does not offer the other peers' tools.
func MCPGoSortedStore(t testing.TB, o Options) *Server {
	t.Helper()
	return mcpGo(t, "mcp-go-sorted-store", o)
}

// mcpGo starts the mcpgo-peer command in mode until the test ends. The stateful modes answer
// DeadSince from the server's own record of each session's death.
func mcpGo(t testing.TB, mode string, o Options) *Server {
	t.Helper()
	cmd := exec.Command(mcpGoPeer(t), "-mode", mode, "-ttl", o.SessionTTL.String(), "-notify", o.Notify.String(),
		"-evict-after", o.EventStoreMaxAge.String())
	u := startProcess(t, cmd, "MCPCHAOS_URL ", "mcpgo-peer")
	s := &Server{Name: mode, URL: u, stats: (&counter{}).stats}
	if mode == "mcp-go" || mode == "mcp-go-retained" || mode == "mcp-go-sorted-store" {
		s.deaths = deathRecord(t, strings.TrimSuffix(u, "/mcp")+mcpgopeer.DeadPath)
	}
	return s
}

// deathRecord reads the peer's record of when a session died, at the time it is asked.
func deathRecord(t testing.TB, at string) func(id string) (time.Time, bool) {
	c := http.Client{Timeout: 10 * time.Second}
	return func(id string) (time.Time, bool) {
		resp, err := c.Get(at + "?id=" + id)
		if err != nil {
			t.Errorf("reading mcp-go's death record: %v", err)
			return time.Time{}, false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
		if resp.StatusCode == http.StatusNotFound {
			return time.Time{}, false
		}
		ns, err := strconv.ParseInt(string(b), 10, 64)
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Errorf("mcp-go's death record answered %s %q", resp.Status, b)
			return time.Time{}, false
		}
		return time.Unix(0, ns), true
	}
}

var peerBuild struct {
	once sync.Once
	path string
	err  error
}

// mcpGoPeer is the path of the mcpgo-peer command, built once per test process without the
// race detector (GOFLAGS cleared). The binary is kept in the user's cache directory under a
// name keyed on the Go version, the module's go.sum and mcpgopeer's sources, so the test
// processes of one suite, and later suites of the same code, build it once between them; a
// build is written beside its final name and renamed over it, so a concurrent one never
// starts a half-written file.
func mcpGoPeer(t testing.TB) string {
	t.Helper()
	peerBuild.once.Do(func() { peerBuild.path, peerBuild.err = buildMCPGoPeer() })
	if peerBuild.err != nil {
		t.Fatalf("building the mcp-go peer: %v", peerBuild.err)
	}
	return peerBuild.path
}

func buildMCPGoPeer() (string, error) {
	src := peerDir("mcpgopeer")
	root := filepath.Join(src, "..", "..", "..")
	key, err := sourceKey(root, src)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "mcpchaos-test-peers")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	final := filepath.Join(dir, "mcpgo-peer-"+key)
	if fi, err := os.Lstat(final); err == nil && fi.Mode().IsRegular() {
		return final, nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d", final, os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.Command("go", "build", "-o", tmp, "./internal/peers/mcpgopeer/cmd/mcpgo-peer")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return final, os.Rename(tmp, final)
}

// sourceKey hashes what the peer's build depends on: the Go version, go.mod and go.sum of the
// module at root, and every file under src.
func sourceKey(root, src string) (string, error) {
	h := sha256.New()
	io.WriteString(h, runtime.Version())
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
