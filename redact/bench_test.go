package redact

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// The cost a target with an Authorization header adds to every response body: an SSE reply
// read through Reader, 1 KiB at a time as the wire reads it.
func BenchmarkReaderSSE(b *testing.B) {
	s := New()
	s.AddHeader(http.Header{"Authorization": {"Bearer Zm9vYmFy/YmF6+cXV4aGVsbG8="}})
	event := "id: 42\nevent: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"c-17","progress":3,"message":"step 3 of 10 \"done\" at /tmp/x?y=1"}}` + "\n\n"
	body := []byte(strings.Repeat(event, 64))
	b.SetBytes(int64(len(body)))
	buf := make([]byte, 32<<10)
	for b.Loop() {
		r := s.Reader(io.NopCloser(bytes.NewReader(body)))
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
	}
}

// What a Set costs a byte of secret: one header value of 256 KiB ("Bearer" and a token of
// letters, digits and the characters that escape), added as a run adds it. Reported per byte
// of the value: bytes allocated while the set is built (B/secret-byte, what bounds the peak)
// and bytes it keeps (live-B/secret-byte). Was about 1.8 KB a byte (issue 30); the bound is 64.
func BenchmarkSetMemory(b *testing.B) {
	value := "Bearer " + secretText(256<<10)
	var before, after runtime.MemStats
	var alloc, live float64
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := New()
		s.AddHeader(http.Header{"Authorization": {value}})
		runtime.ReadMemStats(&after)
		alloc += float64(after.TotalAlloc - before.TotalAlloc)
		runtime.GC()
		runtime.ReadMemStats(&after)
		live += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		runtime.KeepAlive(s)
	}
	n := float64(b.N) * float64(len(value))
	b.ReportMetric(alloc/n, "B/secret-byte")
	b.ReportMetric(live/n, "live-B/secret-byte")
}

// secretText is n bytes of a token: mostly letters and digits, with the characters each
// escape changes (so every escaped form is there to be spelt) and some beyond ASCII.
func secretText(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+=%\"\\<&é€"
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n {
		c := []rune(chars)
		b.WriteRune(c[r.IntN(len(c))])
	}
	return b.String()
}
