package faults

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoServer starts a TCP echo server on loopback. Each connection's end is
// reported on the returned channel, so tests can see the proxy closed the
// upstream side too.
func echoServer(t *testing.T) (addr string, ended <-chan struct{}) {
	t.Helper()
	done := make(chan struct{}, 16)
	addr = tcpServer(t, func(c net.Conn) {
		io.Copy(c, c)
		done <- struct{}{}
	})
	return addr, done
}

// tcpServer serves each connection on loopback with handle, in a goroutine of its own, and
// closes the connection when handle returns; the listener ends with the test.
func tcpServer(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// newProxy starts an Embedded injector with one proxy "p" in front of upstream.
func newProxy(t *testing.T, upstream string) (*Embedded, string) {
	t.Helper()
	inj, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inj.Close() })
	listen, err := inj.AddProxy(context.Background(), "p", upstream)
	if err != nil {
		t.Fatal(err)
	}
	return inj, listen
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second)) // no test may hang
	return c
}

// roundTrip sends a line and waits for its echo, returning how long it took.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader) time.Duration {
	t.Helper()
	begin := time.Now()
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	line, err := r.ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("echo: got %q, %v", line, err)
	}
	return time.Since(begin)
}

// waitEOF reads until the connection ends and returns how it ended.
func waitEOF(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	if err == nil {
		err = io.EOF // io.Copy reports a clean end as nil
	}
	return err
}

func waitEnded(t *testing.T, ended <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: upstream connection still open", what)
	}
}

func TestEmbeddedProxyListensOnLoopback(t *testing.T) {
	upstream, _ := echoServer(t)
	_, listen := newProxy(t, upstream)
	host, port, err := net.SplitHostPort(listen)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("listen = %q, want 127.0.0.1:PORT", listen)
	}
	c := dial(t, listen)
	roundTrip(t, c, bufio.NewReader(c))
}

func TestLatencyReachesOpenConnection(t *testing.T) {
	const latency = 150 * time.Millisecond
	upstream, _ := echoServer(t)
	inj, listen := newProxy(t, upstream)
	c := dial(t, listen)
	r := bufio.NewReader(c)
	if d := roundTrip(t, c, r); d >= latency {
		t.Fatalf("round trip before the fault took %v; loopback should be far faster", d)
	}
	// A float, as some YAML decoders produce, must reach Toxiproxy as 150.
	err := inj.AddToxic(context.Background(), "p", Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 150.0}})
	if err != nil {
		t.Fatal(err)
	}
	if w := inj.proxies["p"].p.Toxics.GetToxic("slow"); w == nil || w.Toxicity != 1 {
		t.Fatalf("toxic in Toxiproxy: %+v, want toxicity 1", w)
	}
	if d := roundTrip(t, c, r); d < latency {
		t.Fatalf("round trip with latency on the open connection took %v, want at least %v", d, latency)
	}
	if err := inj.RemoveToxic(context.Background(), "p", "slow"); err != nil {
		t.Fatal(err)
	}
	if d := roundTrip(t, c, r); d >= latency {
		t.Fatalf("round trip after removal took %v", d)
	}
}

func TestDownCutsAndRefusesThenReopensSameAddress(t *testing.T) {
	upstream, ended := echoServer(t)
	inj, listen := newProxy(t, upstream)
	ctx := context.Background()
	open := dial(t, listen)
	r := bufio.NewReader(open)
	roundTrip(t, open, r)

	if err := inj.AddToxic(ctx, "p", Toxic{Name: "outage", Type: "down"}); err != nil {
		t.Fatal(err)
	}
	if err := waitEOF(r); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("open connection during down: %v, want it cut", err)
	}
	waitEnded(t, ended, "down")
	if c, err := net.Dial("tcp", listen); err == nil {
		c.Close()
		t.Fatal("dial succeeded while the proxy was down")
	}
	if err := inj.AddToxic(ctx, "p", Toxic{Name: "outage2", Type: "down"}); err == nil {
		t.Fatal("a second down on a down proxy was accepted")
	}
	// Other faults can be added while down and apply once it is back.
	if err := inj.AddToxic(ctx, "p", Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 1}}); err != nil {
		t.Fatal(err)
	}

	if err := inj.RemoveToxic(ctx, "p", "outage"); err != nil {
		t.Fatal(err)
	}
	again := dial(t, listen)
	roundTrip(t, again, bufio.NewReader(again))
	if err := inj.RemoveToxic(ctx, "p", "outage"); err == nil {
		t.Fatal("removing an ended down fault again succeeded")
	}
}

func TestCloseLeavesNoListener(t *testing.T) {
	upstream, ended := echoServer(t)
	inj, listen := newProxy(t, upstream)
	ctx := context.Background()
	if err := inj.AddToxic(ctx, "p", Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 1}}); err != nil {
		t.Fatal(err)
	}
	second, err := inj.AddProxy(ctx, "q", upstream)
	if err != nil {
		t.Fatal(err)
	}
	if err := inj.AddToxic(ctx, "q", Toxic{Name: "outage", Type: "down"}); err != nil {
		t.Fatal(err)
	}
	open := dial(t, listen)
	roundTrip(t, open, bufio.NewReader(open))

	if err := inj.Close(); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, ended, "Close")
	for _, addr := range []string{listen, second} {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Fatalf("dial %s succeeded after Close", addr)
		}
	}
	if err := inj.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := inj.AddProxy(ctx, "r", upstream); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddProxy after Close = %v, want ErrClosed", err)
	}
	if err := inj.RemoveToxic(ctx, "p", "slow"); !errors.Is(err, ErrClosed) {
		t.Fatalf("RemoveToxic after Close = %v, want ErrClosed", err)
	}
}

// The documented reset_peer trap: only connections opened after it was added
// are reset.
func TestResetPeerResetsNewConnections(t *testing.T) {
	upstream, _ := echoServer(t)
	inj, listen := newProxy(t, upstream)
	checkResetPeer(t, inj, listen)
}

// checkResetPeer adds reset_peer to proxy "p" of inj and checks Toxiproxy's documented
// behaviour: a connection opened after it is reset, one opened before it is closed plainly.
func checkResetPeer(t *testing.T, inj Injector, listen string) {
	t.Helper()
	old := dial(t, listen)
	oldR := bufio.NewReader(old)
	roundTrip(t, old, oldR)
	if err := inj.AddToxic(context.Background(), "p", Toxic{Name: "rst", Type: "reset_peer"}); err != nil {
		t.Fatal(err)
	}
	fresh := dial(t, listen)
	io.WriteString(fresh, "ping\n")
	if err := waitEOF(fresh); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("new connection: %v, want connection reset", err)
	}
	io.WriteString(old, "ping\n")
	if err := waitEOF(oldR); !errors.Is(err, io.EOF) {
		t.Fatalf("connection opened before reset_peer: %v, want a plain EOF", err)
	}
}

func TestAddToxicRejects(t *testing.T) {
	upstream, _ := echoServer(t)
	inj, _ := newProxy(t, upstream)
	ctx := context.Background()
	lat := Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 1}}
	if err := inj.AddToxic(ctx, "p", lat); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		proxy string
		toxic Toxic
	}{
		{"duplicate name", ctx, "p", lat},
		{"duplicate name across types", ctx, "p", Toxic{Name: "slow", Type: "down"}},
		{"unknown proxy", ctx, "nope", Toxic{Name: "x", Type: "latency"}},
		{"no name", ctx, "p", Toxic{Type: "latency"}},
		{"bad stream", ctx, "p", Toxic{Name: "x", Type: "latency", Stream: "sideways"}},
		{"invalid attributes", ctx, "p", Toxic{Name: "x", Type: "idle_timeout"}},
		{"unknown type", ctx, "p", Toxic{Name: "x", Type: "slow_close"}},
		{"cancelled", cancelled, "p", Toxic{Name: "x", Type: "latency"}},
	}
	for _, tt := range tests {
		if err := inj.AddToxic(tt.ctx, tt.proxy, tt.toxic); err == nil {
			t.Errorf("%s: AddToxic accepted %+v", tt.name, tt.toxic)
		}
	}
	if _, err := inj.AddProxy(ctx, "p", upstream); err == nil {
		t.Error("duplicate proxy name accepted")
	}
	if _, err := inj.AddProxy(ctx, "bad", "no-port"); err == nil {
		t.Error("upstream without a port accepted")
	}
	if err := inj.RemoveToxic(ctx, "p", "never-added"); err == nil {
		t.Error("removing an unknown fault succeeded")
	}
}
