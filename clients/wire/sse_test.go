package wire

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
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

func TestRetrySnifferIgnoresJunk(t *testing.T) {
	for _, line := range []string{"retry: -5", "retry: 1e3", "retry: +10", "retry:", "data: retry: 99", strings.Repeat("x", 100) + "retry: 5"} {
		var r atomic.Int64
		r.Store(-1)
		s := &retrySniffer{r: strings.NewReader(line + "\n\n"), retry: &r}
		if _, err := io.Copy(io.Discard, s); err != nil {
			t.Fatal(err)
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
