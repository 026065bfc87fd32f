package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// conflictServer is a server that refuses a second standalone GET stream while one is attached,
// as the Go and TS SDK servers do (409), and says when an attached stream ends.
type conflictServer struct {
	mu       sync.Mutex
	attached bool
	ended    chan struct{} // a value each time an attached stream's request ends
}

func (s *conflictServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("{}"))
		return
	}
	s.mu.Lock()
	if s.attached {
		s.mu.Unlock()
		http.Error(w, "stream already attached", http.StatusConflict)
		return
	}
	s.attached = true
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	<-r.Context().Done() // the server sees its side of the stream end, and only then
	s.mu.Lock()
	s.attached = false
	s.mu.Unlock()
	s.ended <- struct{}{}
}

// socketsOn counts this process's open TCP sockets whose local or remote port is one of ports
// (/proc/self/fd's socket inodes, looked up in /proc/self/net/tcp and tcp6). It counts only
// the rig's sockets: other tests of the package close theirs on their own time, so a count of
// every descriptor moves with them (it did: 22 after, 21 before, under a full suite).
func socketsOn(t *testing.T, ports ...int) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors:", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	want := map[string]bool{}
	for _, p := range ports {
		want[fmt.Sprintf("%04X", p)] = true
	}
	n := 0
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			_, lp, _ := strings.Cut(f[1], ":")
			_, rp, _ := strings.Cut(f[2], ":")
			if want[lp] || want[rp] {
				n++
			}
		}
	}
	return n
}

// portOf is the port of a "host:port" address.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// halfOpenRig is a stream server behind the shielded embedded Toxiproxy, one GET stream open
// through it and one POST connection left idle beside it.
type halfOpenRig struct {
	srv    *httptest.Server
	ss     *conflictServer
	inj    *Shielded
	addr   string
	stream *http.Response
	client *http.Client
}

func newHalfOpenRig(t *testing.T) *halfOpenRig {
	t.Helper()
	rig := &halfOpenRig{ss: &conflictServer{ended: make(chan struct{}, 4)}}
	rig.srv = httptest.NewServer(rig.ss)
	e, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	rig.inj = Shield(e)
	rig.addr, err = rig.inj.AddProxy(context.Background(), "p", strings.TrimPrefix(rig.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	rig.client = &http.Client{Transport: &http.Transport{}}
	post, err := rig.client.Post("http://"+rig.addr+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, post.Body)
	post.Body.Close() // idle, kept alive: its last request is a POST
	rig.stream = rig.get(t)
	if rig.stream.StatusCode != http.StatusOK {
		t.Fatalf("first GET stream: HTTP %d", rig.stream.StatusCode)
	}
	return rig
}

func (rig *halfOpenRig) get(t *testing.T) *http.Response {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + rig.addr + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (rig *halfOpenRig) halfOpen(t *testing.T, hold time.Duration) {
	t.Helper()
	f := Toxic{Name: "zombie", Type: TypeHalfOpen, Attributes: map[string]any{"hold": hold.Milliseconds()}}
	if err := rig.inj.AddToxic(context.Background(), "p", f); err != nil {
		t.Fatal(err)
	}
	_, err := io.ReadAll(rig.stream.Body)
	rig.stream.Body.Close()
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the client's stream ended with %v; want a reset", err)
	}
	if n := rig.inj.HalfOpened("p"); n != 1 {
		t.Fatalf("half-opened %d streams; want 1 (the GET, not the idle POST connection)", n)
	}
}

// The zombie stream: the client's side is reset, the server keeps its stream and refuses the
// reconnect until the run ends; then everything the fault held is closed.
func TestHalfOpenHoldsTheServersSideUntilClose(t *testing.T) {
	rig := newHalfOpenRig(t)
	ports := []int{portOf(t, rig.addr), portOf(t, rig.srv.URL)}
	if n := socketsOn(t, ports...); n == 0 {
		t.Fatal("the rig's sockets are not found in /proc/self/net/tcp: the count below would prove nothing")
	}
	rig.halfOpen(t, time.Hour)
	for i := range 2 { // the server still believes the stream attached
		resp := rig.get(t)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("reconnect %d: HTTP %d; want 409 while the server's side is held", i, resp.StatusCode)
		}
	}
	// The idle POST connection was left alone: it still carries requests.
	post, err := rig.client.Post("http://"+rig.addr+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil || post.StatusCode != http.StatusOK {
		t.Fatalf("POST beside the fault: %v %v", post, err)
	}
	io.Copy(io.Discard, post.Body)
	post.Body.Close()
	if err := rig.inj.RemoveToxic(context.Background(), "p", "zombie"); err != nil {
		t.Fatalf("ending the fault: %v", err)
	}
	if err := rig.inj.Close(); err != nil { // the run's end
		t.Fatal(err)
	}
	<-rig.ss.ended // the held side closed with the proxy
	rig.client.CloseIdleConnections()
	rig.srv.Close()
	// Every socket of the proxy, the relay and the server is closed once the run has ended:
	// the relay closes the server's side it held as the proxy closes (bounded wait: the
	// closes of the relay's goroutines follow the proxy's Close, not before it returns).
	deadline := time.Now().Add(10 * time.Second)
	for socketsOn(t, ports...) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := socketsOn(t, ports...); n > 0 {
		t.Errorf("%d sockets of the proxy or the server still open 10 s after the run ended: the fault leaked", n)
	}
}

// After hold the relay closes the server's side itself: the server lets the stream go and
// accepts the reconnect.
func TestHalfOpenReleasesTheServersSideAfterHold(t *testing.T) {
	rig := newHalfOpenRig(t)
	defer rig.srv.Close()
	defer rig.inj.Close()
	rig.halfOpen(t, 100*time.Millisecond)
	<-rig.ss.ended // bounded by the hold, not by the proxy's close
	resp := rig.get(t)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reconnect after the hold: HTTP %d; want 200", resp.StatusCode)
	}
	if n := rig.inj.Held("p"); n != 0 {
		t.Errorf("%d server sockets still held after the hold", n)
	}
}

// half_open needs both sockets in hand: a toxiproxy-server's proxy cannot be half-opened,
// and the check before the run says so.
func TestHalfOpenRefusedWithoutTheEmbeddedProxy(t *testing.T) {
	ext := &External{api: "http://127.0.0.1:8474"}
	err := ext.Check(context.Background(), []Toxic{{Name: "zombie", Type: TypeHalfOpen}})
	if err == nil || !strings.Contains(err.Error(), "half_open needs the embedded fault proxy") {
		t.Fatalf("Check = %v; want half_open refused", err)
	}
}
