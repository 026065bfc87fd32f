package faults

import (
	"net"
	"sync"
	"testing"
	"time"
)

// deafServer accepts connections and never reads from them (a server that stalls an upload:
// it never reads a request body); they are closed when the test ends.
func deafServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String()
}

// uploaders send a request whose body never ends through listen, until stop: what a server
// that does not read leaves Toxiproxy's upstream chain writing.
func uploaders(t *testing.T, listen string, n int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	chunk := make([]byte, 64<<10)
	for range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", listen)
			if err != nil {
				return
			}
			defer c.Close()
			c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"))
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)) // a bound, so that stop is seen
				if _, err := c.Write(chunk); err != nil && !isTimeout(err) {
					return
				}
			}
		})
	}
	return &wg
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// The upstream direction: clients upload to a server that never reads, so Toxiproxy's
// upstream chain has nowhere to write. The relay between Toxiproxy and the server reads what
// Toxiproxy sends at once and cuts the server that lets it pile up, so every fault of the
// schedule (each on the upstream stream, where the stalled writer is) is still applied and
// removed on time. Without that relay the first change is abandoned after CallBound.
func TestShieldKeepsTheScheduleOnTimeAgainstAStalledUpload(t *testing.T) {
	emb, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	inj := Shield(emb)
	t.Cleanup(func() { inj.Close() })
	listen, err := inj.AddProxy(t.Context(), "p", deafServer(t))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	wg := uploaders(t, listen, 3, stop)
	defer wg.Wait()
	defer close(stop)
	// The uploads have filled the server's side before the first fault: wait for the relay to
	// hold what the server does not read (it is cut at the first change, when the relay reads
	// at once).
	for i := 0; !heldBack(inj, "p") && i < 500; i++ {
		time.Sleep(10 * time.Millisecond) // polling the relay's queue, bounded, not synchronising
	}
	if !heldBack(inj, "p") {
		t.Fatalf("the relay holds nothing the server left unread after 3 uploads")
	}
	scheduleOnTime(t, inj, Upstream)
	if inj.Cuts() == 0 {
		t.Errorf("no server connection was cut for not reading 3 uploads")
	}
}

// heldBack says whether proxy's relays hold the pressure mark for a server that stopped
// reading (a queue that comes and goes is one being written, not one held back).
func heldBack(inj *Shielded, proxy string) bool {
	inj.mu.Lock()
	rs := []*relay{inj.relays[proxy], inj.servers[proxy]}
	inj.mu.Unlock()
	for _, r := range rs {
		if r != nil && r.holds() {
			return true
		}
	}
	return false
}

func (r *relay) holds() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for rc := range r.conns {
		switch c := rc.(type) {
		case *relayConn:
			if c.r.server && c.queued.Load() >= pressureMark {
				return true
			}
		case *chainConn:
			if c.server.queuedBytes.Load() >= pressureMark {
				return true
			}
		}
	}
	return false
}
