package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

const idle = 100 * time.Millisecond

func idleFault(stream string) Toxic {
	return Toxic{Name: "lb", Type: "idle_timeout", Stream: stream, Attributes: map[string]any{"timeout": int(idle / time.Millisecond)}}
}

func TestIdleTimeoutClosesIdleConnection(t *testing.T) {
	for _, dir := range []string{Downstream, Upstream} {
		t.Run(dir, func(t *testing.T) {
			upstream, ended := echoServer(t)
			inj, listen := newProxy(t, upstream)
			c := dial(t, listen)
			r := bufio.NewReader(c)
			roundTrip(t, c, r)
			// Added to the open connection: its idle clock starts now.
			begin := time.Now()
			if err := inj.AddToxic(context.Background(), "p", idleFault(dir)); err != nil {
				t.Fatal(err)
			}
			if err := waitEOF(r); !errors.Is(err, io.EOF) {
				t.Fatalf("client read: %v, want EOF", err)
			}
			if d := time.Since(begin); d < idle || d > idle+3*time.Second {
				t.Fatalf("closed after %v, want about %v", d, idle)
			}
			waitEnded(t, ended, "idle_timeout") // closed both ways
		})
	}
}

// Data every idle/4 for 5×idle keeps the connection up throughout; then, quiet, it closes
// exactly one idle timeout after the last data. On the bubble's clock: a busy machine cannot
// make a 25 ms gap look like 100 (the proxy end to end is TestIdleTimeoutClosesIdleConnection).
func TestIdleTimeoutSparesBusyConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, out, stub, _ := newStub()
		done := runIdle(stub, idle)
		var last time.Time
		for start := time.Now(); time.Since(start) < 5*idle; time.Sleep(idle / 4) {
			in <- &stream.StreamChunk{Data: []byte("x")}
			if c, open := <-out; !open || string(c.Data) != "x" {
				t.Fatalf("after %v: forwarded %v, open %t", time.Since(start), c, open)
			}
			last = time.Now()
		}
		if _, open := <-out; open {
			t.Fatal("data on an idle stream")
		}
		if d := time.Since(last); d != idle {
			t.Fatalf("closed %v after the last data, want %v", d, idle)
		}
		close(in)
		<-done
	})
}

// An SSE stream through the proxy ends when the server stays quiet longer
// than the idle timeout, while the server still holds the stream open: the
// drop the seed describes.
func TestIdleTimeoutCutsSSEStream(t *testing.T) {
	serverSawEnd := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "id: 1\ndata: hello\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hold the stream until the client is gone
		close(serverSawEnd)
	}))
	defer srv.Close()
	inj, listen := newProxy(t, strings.TrimPrefix(srv.URL, "http://"))
	if err := inj.AddToxic(context.Background(), "p", idleFault(Downstream)); err != nil {
		t.Fatal(err)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + listen + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	for _, want := range []string{"id: 1\n", "data: hello\n", "\n"} {
		if line, err := body.ReadString('\n'); line != want {
			t.Fatalf("event line = %q, %v; want %q", line, err, want)
		}
	}
	begin := time.Now()
	_, err = body.ReadString('\n')
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		t.Fatalf("stream read after idling: %v, want the stream to end", err)
	}
	if d := time.Since(begin); d > idle+3*time.Second {
		t.Fatalf("stream ended after %v, want about %v", d, idle)
	}
	select {
	case <-serverSawEnd:
	case <-time.After(5 * time.Second):
		t.Fatal("server still holds the stream the client lost")
	}
}

// runIdle runs the toxic on a bare stub, as Toxiproxy would, and returns a
// channel closed when that run ends.
func runIdle(stub *toxics.ToxicStub, timeout time.Duration) <-chan struct{} {
	done := make(chan struct{})
	w := &toxics.ToxicWrapper{Toxic: &IdleTimeoutToxic{Timeout: timeout.Milliseconds()}, Toxicity: 1}
	go func() {
		defer close(done)
		stub.Run(w)
	}()
	return done
}

func newStub() (in chan *stream.StreamChunk, out chan *stream.StreamChunk, stub *toxics.ToxicStub, state *idleState) {
	in = make(chan *stream.StreamChunk)
	out = make(chan *stream.StreamChunk)
	stub = toxics.NewToxicStub(in, out)
	state = new(IdleTimeoutToxic).NewState().(*idleState)
	stub.State = state
	return in, out, stub, state
}

func TestIdleTimeoutClockSurvivesInterrupts(t *testing.T) {
	in, out, stub, state := newStub()
	runIdle(stub, time.Hour)
	in <- &stream.StreamChunk{Data: []byte("x")}
	if c := <-out; string(c.Data) != "x" {
		t.Fatalf("forwarded %q", c.Data)
	}
	if !stub.InterruptToxic() {
		t.Fatal("interrupt failed")
	}
	last := state.last
	if last.IsZero() {
		t.Fatal("idle clock not recorded")
	}
	// A restart (the toxic list changed) keeps the clock.
	runIdle(stub, time.Hour)
	if !stub.InterruptToxic() {
		t.Fatal("interrupt failed")
	}
	if !state.last.Equal(last) {
		t.Fatalf("restart reset the idle clock from %v to %v", last, state.last)
	}
	// Idle for longer than the timeout already: a restart closes at once.
	state.last = time.Now().Add(-time.Hour)
	runIdle(stub, time.Minute)
	select {
	case _, open := <-out:
		if open {
			t.Fatal("data on an idle stream")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("connection idle past its timeout was not closed on restart")
	}
}

func TestIdleTimeoutDrainsAfterClosing(t *testing.T) {
	in, out, stub, state := newStub()
	done := runIdle(stub, idle)
	if _, open := <-out; open {
		t.Fatal("data on an idle stream")
	}
	// The peer keeps sending after the close: the stages in front must not block.
	select {
	case in <- &stream.StreamChunk{Data: []byte("late")}:
	case <-time.After(5 * time.Second):
		t.Fatal("closed stub does not drain its input")
	}
	if stub.InterruptToxic() {
		t.Fatal("a closed stub was interrupted")
	}
	close(in)
	<-done
	if !state.expired {
		t.Fatal("state not marked expired")
	}
}

func TestIdleTimeoutEndsWithInput(t *testing.T) {
	in, out, stub, _ := newStub()
	done := runIdle(stub, time.Hour)
	close(in)
	if _, open := <-out; open {
		t.Fatal("data after the input ended")
	}
	<-done
}

// A peer that reads nothing blocks the toxic's output; Toxiproxy must still be able to pause
// the toxic (to add or remove another), or the fault schedule waits forever (Toxiproxy issues
// 427 and 558). The chunk it held comes out first when it runs again.
func TestIdleTimeoutYieldsWhileItsOutputIsBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, out, stub, _ := newStub()
		done := runIdle(stub, time.Hour)
		in <- &stream.StreamChunk{Data: []byte("held")} // nobody reads out
		interrupted := make(chan bool, 1)
		go func() { interrupted <- stub.InterruptToxic() }()
		select {
		case ok := <-interrupted:
			if !ok {
				t.Fatal("the stub reports itself closed")
			}
		case <-time.After(time.Minute):
			t.Fatal("the toxic ignores interrupts while its output is blocked")
		}
		<-done
		runIdle(stub, time.Hour)
		go func() { in <- &stream.StreamChunk{Data: []byte("next")} }()
		for _, want := range []string{"held", "next"} {
			if c := <-out; string(c.Data) != want {
				t.Fatalf("forwarded %q, want %q", c.Data, want)
			}
		}
		close(in)
		if _, open := <-out; open {
			t.Fatal("data after the input ended")
		}
	})
}
