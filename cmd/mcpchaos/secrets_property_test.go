package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/redact"
)

// A token (with / + = % " \ in it) that a hostile server echoes through every path it has —
// JSON-RPC error messages escaped as PHP escapes them, tool results, SSE events, redirect
// Locations and paths, response headers, session ids — never reaches an output of mcpchaos in
// any encoding redact.Encodings lists: stdout, stderr, the export in every format (JSON, CSV,
// hgrm, JUnit), the HTML report, inspect's fingerprint, /metrics. Random tokens, a bounded
// number of rounds.
func TestSecretsNeverLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpchaos a dozen times")
	}
	const rounds = 2
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 20))
	for round := range rounds {
		token := randomToken(rng)
		t.Logf("round %d: token %q", round, token)
		t.Setenv("MCP_TOKEN", token)
		for _, mode := range echoModes {
			t.Run(fmt.Sprintf("%d/%s", round, mode), func(t *testing.T) {
				srv := &echoServer{mode: mode}
				addr := serveEcho(t, srv)
				dir := t.TempDir()
				outputs := runCmd(t, dir, "run", filepath.Join("testdata", "secrets-echo.yaml"), "--target", "http://"+addr+"/mcp",
					"--header", "Authorization: Bearer ${MCP_TOKEN}", "--progress", "lines", "--out", filepath.Join(dir, "r.json"),
					"--metrics-addr", freeAddr(t), "--metrics-linger", "3s")
				if _, err := os.Stat(filepath.Join(dir, "r.json")); err == nil {
					outputs += runCmd(t, dir, "report", filepath.Join(dir, "r.json"), "-o", filepath.Join(dir, "r.html"))
				}
				outputs += runCmd(t, dir, "inspect", "http://"+addr+"/mcp", "--header", "Authorization: Bearer ${MCP_TOKEN}",
					"--idle", "200ms", "--timeout", "2s", "--json", filepath.Join(dir, "i.json"))
				if srv.echoed.Load() == 0 {
					t.Fatalf("the server never echoed the token (mode %s)", mode)
				}
				searchAll(t, token, outputs, dir, mode != "sse-event" && mode != "session-id")
			})
		}
	}
}

// randomToken is 24 to 40 characters of base64 and the characters that escape differently
// in each encoding.
func randomToken(rng *rand.Rand) string {
	const chars = `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+=%"\`
	b := make([]byte, 24+rng.IntN(17))
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	copy(b, `/+=%"\`) // each of them at least once, then shuffled
	rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return string(b)
}

// runCmd runs mcpchaos in this process, as main does (the error printed on stderr), with
// /metrics scraped while it runs when --metrics-addr is given; it returns all it printed.
func runCmd(t *testing.T, dir string, args ...string) string {
	var stdout, stderr lockedBuffer // written from several goroutines, as os.Stderr may be
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	var scraped strings.Builder
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, a := range args {
		if a == "--metrics-addr" {
			wg.Go(func() { scrapeAll(&scraped, "http://"+args[i+1]+"/metrics", done) })
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(&stderr, "mcpchaos:", err)
	}
	close(done)
	wg.Wait()
	t.Logf("mcpchaos %s:\n%s%s", args[0], stdout.String(), stderr.String())
	return stdout.String() + "\n" + stderr.String() + "\n" + scraped.String()
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// scrapeAll reads url every 20 ms until done, keeping every answer.
func scrapeAll(out *strings.Builder, url string, done <-chan struct{}) {
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := hc.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out.Write(b)
		}
		select {
		case <-done:
			return
		case <-time.After(20 * time.Millisecond): // a bounded poll
		}
	}
}

// searchAll fails if any encoding of token is in what was printed or in a file under dir.
// shown says the echo is known to reach an output (a mark must then be found): mcpchaos does
// not quote a session id or an SSE event's id.
func searchAll(t *testing.T, token, printed, dir string, shown bool) {
	t.Helper()
	texts := map[string]string{"stdout, stderr and /metrics": printed}
	files := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			texts[p] = string(b)
			files++
		}
		return nil
	})
	if files < 4 { // r.json, r.csv, r.junit.xml, r.hgrm/...
		t.Errorf("only %d files written", files)
	}
	for where, text := range texts {
		for name, enc := range redact.Encodings(token) {
			if i := strings.Index(text, enc); i >= 0 {
				t.Errorf("%s holds the token (%s): …%s…", where, name, text[max(0, i-80):min(len(text), i+len(enc)+20)])
			}
		}
	}
	if shown && !strings.Contains(fmt.Sprint(texts), redact.Mark) {
		t.Errorf("nothing was redacted: the echo never reached an output, so nothing was tested")
	}
}

func freeAddr(t *testing.T) string {
	addr, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// echoModes are the paths by which echoServer sends the token back.
var echoModes = []string{"php-error", "unicode-error", "tool-result", "sse-event", "redirect-loop", "redirect-away", "status-401", "session-id"}

// echoServer is an MCP server (JSON replies, no GET stream) that echoes the request's
// Authorization header back through one path, its mode.
type echoServer struct {
	mode   string
	echoed atomic.Int64
}

// serveEcho serves s on loopback until the test (or script, script_echo_test.go) ends.
func serveEcho(t interface {
	Fatal(...any)
	Cleanup(func())
}, s *echoServer) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: s}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	switch s.mode {
	case "redirect-loop": // a token percent-encoded in a same-origin path, a loop
		s.echoed.Add(1)
		http.Redirect(w, r, "/loop/"+strings.ReplaceAll(url.QueryEscape(auth), "+", "%20")+"/x", http.StatusTemporaryRedirect)
		return
	case "redirect-away":
		s.echoed.Add(1)
		http.Redirect(w, r, "http://tok:"+url.QueryEscape(auth)+"@127.0.0.2:9/"+url.PathEscape(auth)+"?t="+url.QueryEscape(auth), http.StatusTemporaryRedirect)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
	sid := "s-1"
	if s.mode == "session-id" {
		sid = strings.TrimPrefix(auth, "Bearer ") // visible ASCII: taken and sent back
		s.echoed.Add(1)
	}
	w.Header().Set("Mcp-Session-Id", sid)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": v})
		_, _ = w.Write(b)
	}
	switch m.Method {
	case "initialize":
		reply(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "echo", "version": "1"}})
		return
	case "tools/list":
		reply(map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
		return
	case "ping":
		reply(map[string]any{})
		return
	}
	s.echoed.Add(1)
	switch s.mode {
	case "php-error":
		w.Header().Set("Content-Type", "application/json")
		q, _ := json.Marshal("bad credentials: " + auth)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":%s}}`, m.ID, strings.ReplaceAll(string(q), "/", `\/`))
	case "unicode-error":
		w.Header().Set("Content-Type", "application/json")
		var u strings.Builder
		for _, c := range "bad credentials: " + auth {
			fmt.Fprintf(&u, `\u%04x`, c)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"%s"}}`, m.ID, u.String())
	case "tool-result":
		reply(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "rejected " + auth + " and " + base64.StdEncoding.EncodeToString([]byte(auth))}}})
	case "sse-event":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: %s\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"broken\": %q\n\n", auth, auth)
	case "status-401":
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+url.QueryEscape(auth)+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "unauthorized: %s (%s)", base64.URLEncoding.EncodeToString([]byte(auth)), url.PathEscape(auth))
	default:
		reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
	}
}
