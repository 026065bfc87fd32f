package faults

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// newShielded is an embedded Toxiproxy behind its shield with one proxy, "p", to upstream, as
// a run sets it up; it returns the address clients are given.
func newShielded(t *testing.T, upstream string) (*Shielded, string) {
	t.Helper()
	e, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	inj := Shield(e)
	t.Cleanup(func() { inj.Close() })
	listen, err := inj.AddProxy(context.Background(), "p", upstream)
	if err != nil {
		t.Fatal(err)
	}
	return inj, listen
}

// Through the shield, whose relay feeds Toxiproxy's chains in process, reset_peer keeps
// Toxiproxy's documented behaviour: connections opened while it is in force are reset,
// older ones closed, and once it is removed new connections carry bytes again.
func TestShieldedResetPeerResetsNewConnections(t *testing.T) {
	upstream, _ := echoServer(t)
	inj, listen := newShielded(t, upstream)
	ctx := context.Background()
	checkResetPeer(t, inj, listen)
	if err := inj.RemoveToxic(ctx, "p", "rst"); err != nil {
		t.Fatal(err)
	}
	after := dial(t, listen)
	after.SetDeadline(time.Now().Add(30 * time.Second)) // a bound; the echo comes at once
	roundTrip(t, after, bufio.NewReader(after))
}

// A held connection through the shielded proxy costs the proxy its two sockets (the client's,
// accepted, and the server's, dialed) and Toxiproxy's six goroutines: the relay holds no
// goroutine, socket pair or pipe of its own for it (it had three goroutines, four more sockets
// and two splice pipes while it stood in front of Toxiproxy's listener and behind its dial).
func TestShieldedHeldConnectionCost(t *testing.T) {
	const n = 50
	upstream := tcpServer(t, func(c net.Conn) { // an echo that holds no splice pipe (io.Copy would)
		buf := make([]byte, 512)
		for {
			k, err := c.Read(buf)
			if err != nil {
				return
			}
			if _, err := c.Write(buf[:k]); err != nil {
				return
			}
		}
	})
	_, listen := newShielded(t, upstream)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	fd0, g0 := fds(), runtime.NumGoroutine()
	for range n {
		c := dial(t, listen)
		c.SetDeadline(time.Now().Add(30 * time.Second)) // a bound; the echo comes at once
		roundTrip(t, c, bufio.NewReader(c))
	}
	// Per connection, beside the proxy's: the test's client socket, and the echo server's
	// accepted socket and goroutine.
	wantFDs, wantG := n*(2+2), n*(6+1)
	g := runtime.NumGoroutine() - g0
	for deadline := time.Now().Add(5 * time.Second); g > wantG && time.Now().Before(deadline); g = runtime.NumGoroutine() - g0 {
		runtime.Gosched() // connections' set-up goroutines still ending: a bound, not a sleep
	}
	if fd := fds() - fd0; fd > wantFDs || g > wantG {
		t.Errorf("%d held connections: %d more descriptors and %d more goroutines; want at most %d and %d", n, fd, g, wantFDs, wantG)
	}
}

// Every toxic type of Toxiproxy's, and mcpchaos's idle_timeout, acts through the shield whose
// relay feeds Toxiproxy's chains in process, as a client sees it (reset_peer and down have
// tests of their own). Each is added on the downstream stream, then a new connection sends
// 100 bytes to an echo server and reads the echo (toxics that pass data on) or until the
// connection ends (toxics that end it); the bounds are lower bounds or byte counts, none a
// coincidence of timing.
func TestShieldedAppliesEveryToxic(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		toxic Toxic
		ends  bool          // the toxic ends the connection: read to its end
		bytes int           // what the client reads
		least time.Duration // no sooner than
	}{
		{Toxic{Type: "latency", Attributes: map[string]any{"latency": 300}}, false, n, 300 * time.Millisecond},
		{Toxic{Type: "bandwidth", Attributes: map[string]any{"rate": 1}}, false, n, 50 * time.Millisecond},                      // 1 KB/s: about 100 ms
		{Toxic{Type: "slicer", Attributes: map[string]any{"average_size": 1, "delay": 2000}}, false, n, 100 * time.Millisecond}, // 2 ms a byte
		{Toxic{Type: "limit_data", Attributes: map[string]any{"bytes": 10}}, true, 10, 0},
		{Toxic{Type: "timeout", Attributes: map[string]any{"timeout": 200}}, true, 0, 200 * time.Millisecond},
		{Toxic{Type: "idle_timeout", Attributes: map[string]any{"timeout": 200}}, true, n, 200 * time.Millisecond},
	} {
		t.Run(c.toxic.Type, func(t *testing.T) {
			upstream, _ := echoServer(t)
			inj, listen := newShielded(t, upstream)
			c.toxic.Name = "f"
			if err := inj.AddToxic(context.Background(), "p", c.toxic); err != nil {
				t.Fatal(err)
			}
			conn := dial(t, listen)
			conn.SetDeadline(time.Now().Add(10 * time.Second)) // a bound: every toxic here acts sooner
			begin := time.Now()
			if _, err := conn.Write(make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			var got int64
			var err error
			if c.ends {
				got, err = io.Copy(io.Discard, conn) // nil at the connection's end
			} else {
				var k int
				k, err = io.ReadFull(conn, make([]byte, n))
				got = int64(k)
			}
			took := time.Since(begin)
			if err != nil || got != int64(c.bytes) || took < c.least {
				t.Errorf("%s: read %d bytes in %v, then %v; want %d bytes no sooner than %v%s", c.toxic.Type, got, took.Round(time.Millisecond), err,
					c.bytes, c.least, map[bool]string{true: ", then the connection's end"}[c.ends])
			}
		})
	}
}
