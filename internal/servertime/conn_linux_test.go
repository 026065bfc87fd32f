package servertime

import (
	"bufio"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// serverTimes are a loopback server's clock readings around its write of one reply.
type serverTimes struct{ before, after int64 }

// echoServer answers each line it reads with a line, and reports the times around each write.
func echoServer(t *testing.T) (addr string, replies <-chan serverTimes) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan serverTimes, 16)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			before := time.Now().UnixNano()
			if _, err := c.Write([]byte("reply\n")); err != nil {
				return
			}
			ch <- serverTimes{before, time.Now().UnixNano()}
		}
	}()
	return ln.Addr().String(), ch
}

// TestReplyTimedAtArrival: a reply read long after it arrived is timed at its arrival, within
// the server's clock readings around its write, not when the reader got to it.
func TestReplyTimedAtArrival(t *testing.T) {
	addr, replies := echoServer(t)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var got []time.Duration
	m := &Meter{Record: func(d time.Duration) { got = append(got, d) }}
	c, err := Wrap(nc.(*net.TCPConn), m)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	const exchanges = 6
	for i := range exchanges {
		sent := time.Now().UnixNano()
		if _, err := c.Write([]byte("req ")); err != nil { // a request in two writes: timed from the last
			t.Fatal(err)
		}
		last := time.Now().UnixNano()
		if _, err := c.Write([]byte("line\n")); err != nil {
			t.Fatal(err)
		}
		wrote := time.Now().UnixNano()
		st := <-replies
		<-time.After(30 * time.Millisecond) // the reader is late: a starved generator's goroutine
		before := len(got)
		n, err := io.ReadAtLeast(c, buf, len("reply\n"))
		if err != nil || string(buf[:n]) != "reply\n" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		raw := time.Now().UnixNano() - sent
		if len(got) == before {
			continue // left out: counted in Unsure (below)
		}
		d := got[len(got)-1].Nanoseconds()
		if d < st.before-wrote || d > st.after-last {
			t.Errorf("exchange %d: timed %v; the reply was written %v..%v after the request", i, got[len(got)-1], time.Duration(st.before-wrote), time.Duration(st.after-last))
		}
		if d >= raw {
			t.Errorf("exchange %d: timed %v, not less than the %v the reader saw", i, time.Duration(d), time.Duration(raw))
		}
	}
	// The kernel turns stamping on a moment after the first socket asks, and a write can be
	// preempted past MaxWriteSpan on a busy machine: a few exchanges may be left out, not most.
	if int64(len(got))+m.Unsure() != exchanges || len(got) < exchanges/2 {
		t.Fatalf("%d exchanges timed and %d left out, of %d", len(got), m.Unsure(), exchanges)
	}
}

// TestEndOfStream: a read at the end of the server's stream is io.EOF, an awaited reply or not.
func TestEndOfStream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.ReadAll(io.LimitReader(c, 4))
			c.Close()
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m := &Meter{}
	c, err := Wrap(nc.(*net.TCPConn), m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read %d, %v; want 0, io.EOF", n, err)
	}
}
