package redact

import (
	"bytes"
	"io"
	"net/http"
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
