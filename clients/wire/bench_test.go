package wire

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// BenchmarkCallTool is one tools/call round trip against the reference server on loopback
// (server included: both run in this process).
func BenchmarkCallTool(b *testing.B) {
	for _, mode := range []string{refserver.PostSSE, refserver.PostJSON} {
		b.Run(mode, func(b *testing.B) {
			inst, err := refserver.Start("127.0.0.1:0", refserver.Config{PostResponse: mode}.WithDefaults())
			if err != nil {
				b.Fatal(err)
			}
			defer inst.Close()
			ctx := context.Background()
			s, _, err := endpoint(inst.URL).Initialize(ctx)
			if err != nil {
				b.Fatal(err)
			}
			args := map[string]any{"text": "bench"}
			b.ReportAllocs()
			for b.Loop() {
				if rep, err := s.CallTool(ctx, "echo", args); err != nil || !rep.OK() {
					b.Fatal(rep, err)
				}
			}
		})
	}
}

// BenchmarkReadEvents parses a stream of typical MCP notification events.
func BenchmarkReadEvents(b *testing.B) {
	ev := "id: 4471\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"logger\":\"mcpchaos-target\",\"data\":{\"seq\":1}}}\n\n"
	stream := strings.Repeat(ev, 1000)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range readEvents(strings.NewReader(stream), 1<<16, nil) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1000 {
			b.Fatal(n)
		}
	}
}
