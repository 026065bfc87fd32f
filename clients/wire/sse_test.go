package wire

import (
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	sse "github.com/tmaxmax/go-sse"
)

func TestReadEvents(t *testing.T) {
	stream := "id: 7\nretry: 250\ndata:\n\n" + // priming: id, empty data
		": keepalive\n\n" +
		"id: 8\r\ndata: {\"a\":1}\r\n\r\n" + // CRLF
		"data: line1\ndata: line2\n\n" + // no id: cursor stays 8
		"id:\ndata: x\n\n" + // empty id resets the cursor
		"data: cut off at EOF" // never dispatched
	var retry atomic.Int64
	retry.Store(-1)
	var got []Event
	for ev, err := range readEvents(iotest.OneByteReader(strings.NewReader(stream)), 1<<10, &retry) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := []Event{{"7", ""}, {"8", `{"a":1}`}, {"8", "line1\nline2"}, {"", "x"}}
	if len(got) != len(want) {
		t.Fatalf("got %d events %q, want %q", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
	if r := retry.Load(); r != 250 {
		t.Errorf("retry = %d, want 250", r)
	}
}

func TestReadEventsCapsSize(t *testing.T) {
	big := "data: " + strings.Repeat("x", 4096) + "\n\n"
	for _, err := range readEvents(strings.NewReader(big), 1024, nil) {
		if err == nil {
			t.Fatal("an event over the cap was accepted")
		}
		if _, ok := ClassifyRead(err, 1024).(*TooLargeError); !ok {
			t.Fatalf("error %v is not classified as too large", err)
		}
		return
	}
	t.Fatal("no error for an event over the cap")
}

func TestRetryIgnoresJunk(t *testing.T) {
	for _, line := range []string{"retry: -5", "retry: 1e3", "retry: +10", "retry:", "data: retry: 99", strings.Repeat("x", 100) + "retry: 5"} {
		var r atomic.Int64
		r.Store(-1)
		for _, err := range readEvents(strings.NewReader(line+"\n\n"), 1<<10, &r) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if r.Load() != -1 {
			t.Errorf("%q set retry to %d", line, r.Load())
		}
	}
}

// FuzzReadEvents: any byte stream parses without a panic, never yields an event over the cap,
// and the retry sniffer never reports a negative value.
func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{
		"id: 7\nretry: 250\ndata:\n\n",
		"id: 8\r\ndata: {\"a\":1}\r\n\r\n",
		"data: a\rdata: b\r\r",
		": comment\n\nevent: x\ndata: y\n\n",
		"retry: 99999999999999999999\n\n",
		"id: \x00\ndata: z\n\n",
		"data: " + strings.Repeat("x", 300) + "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var retry atomic.Int64
		retry.Store(-1)
		for ev, err := range readEvents(strings.NewReader(string(data)), 256, &retry) {
			if err != nil {
				break
			}
			if len(ev.Data) > 256 {
				t.Fatalf("event of %d bytes passed a 256-byte cap", len(ev.Data))
			}
		}
		if r := retry.Load(); r < -1 {
			t.Fatalf("retry %d", r)
		}
	})
}

// FuzzReadEventsLikeGoSSE: the parser yields exactly the events go-sse's Read yields (it
// replaced go-sse to hold no buffer while idle; see readEvents), whole or read a byte at a time.
func FuzzReadEventsLikeGoSSE(f *testing.F) {
	for _, s := range []string{
		"id: 7\nretry: 250\ndata:\n\n",
		"id: 8\r\ndata: {\"a\":1}\r\n\r\n",
		"data: a\rdata: b\r\r",
		"\xEF\xBB\xBFdata: bom\n\n\xEF\xBB\xBFdata: not\n\n",
		"\n\n\xEF\xBB\xBFid: 1\n\n",
		": comment\n\nevent: x\ndata: y\n\n",
		"data\ndata\n\nid\n\n",
		"id: \x00\ndata: z\n\nid: 3\n\ndatax: 1\ndata:2\n\n",
		"data: a\r\n\r\ndata: b\r\r\ndata: c\n\r\n",
		"data: cut\n",
		"id: 9\ndata: x",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want []Event
		for ev, err := range sse.Read(strings.NewReader(string(data)), &sse.ReadConfig{MaxEventSize: 1 << 20}) {
			if err != nil {
				t.Skip("go-sse failed:", err)
			}
			want = append(want, Event{Cursor: ev.LastEventID, Data: ev.Data})
		}
		for _, r := range []io.Reader{strings.NewReader(string(data)), iotest.OneByteReader(strings.NewReader(string(data)))} {
			var got []Event
			for ev, err := range readEvents(r, 1<<20, nil) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q:\n got  %q\n want %q (go-sse)", data, got, want)
			}
		}
	})
}

// An idle stream holds no read buffer, and a long event's grown buffers are let go after it:
// whenever the parser waits for a new burst (the server sent nothing more yet), it reads one
// byte and holds nothing.
func TestReadEventsHoldsNoBufferWhileIdle(t *testing.T) {
	big := strings.Repeat("x", 3*sseChunk)
	r := &bursts{t: t, chunks: []string{"id: 1\ndata: a\n\n", "data: " + big + "\n\n", ": keepalive\n\n", "data: b\n\n"}}
	r.p = &sseParser{r: r, maxEvent: 1 << 20}
	var got []string
	for {
		ev, err, ok := r.p.next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Data)
	}
	if want := []string{"a", big, "b"}; !slices.Equal(got, want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	if r.waits != 4 {
		t.Errorf("%d waits for a burst, want 4", r.waits)
	}
}

// bursts hands out its chunks as a socket would, a chunk at a time, checking the parser's
// holdings whenever it asks for a chunk not yet "sent".
type bursts struct {
	t      *testing.T
	p      *sseParser
	chunks []string
	waits  int
}

func (b *bursts) Read(p []byte) (int, error) {
	if len(b.chunks) == 0 {
		return 0, io.EOF
	}
	if b.p.start == b.p.end { // a wait for the next burst (the read runs on the parser's goroutine)
		b.waits++
		if len(p) != 1 || b.p.buf != nil || cap(b.p.data) > sseChunk {
			b.t.Errorf("waiting for burst %d: reads %d bytes, holds a %d-byte buffer and %d bytes of data buffer", b.waits, len(p), len(b.p.buf), cap(b.p.data))
		}
	}
	n := copy(p, b.chunks[0])
	if b.chunks[0] = b.chunks[0][n:]; b.chunks[0] == "" {
		b.chunks = b.chunks[1:]
	}
	return n, nil
}
