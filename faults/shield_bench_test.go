package faults

import (
	"context"
	"io"
	"net"
	"testing"
)

// passthrough is an injector whose proxy is its upstream: what a benchmark of the relay alone
// stands in front of.
type passthrough struct{ Injector }

func (passthrough) AddProxy(_ context.Context, _, upstream string) (string, error) {
	return upstream, nil
}
func (passthrough) Close() error { return nil }

// sink serves each connection with size bytes, then closes it.
func sink(b *testing.B, size int) string {
	chunk := make([]byte, 64<<10)
	return tcpServer(b, func(c net.Conn) {
		for left := size; left > 0; left -= len(chunk) {
			if _, err := c.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
	})
}

// BenchmarkShield measures what the relay adds: per connection (dial, one small reply, close)
// and per MiB relayed to a client that reads, each beside the same without the relay.
func BenchmarkShield(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
	}{{"conn", 64}, {"MiB", 1 << 20}} {
		for _, shielded := range []bool{false, true} {
			name := c.name + "/direct"
			if shielded {
				name = c.name + "/shield"
			}
			b.Run(name, func(b *testing.B) {
				addr := sink(b, c.size)
				if shielded {
					s := Shield(passthrough{})
					b.Cleanup(func() { s.Close() })
					var err error
					if addr, err = s.AddProxy(context.Background(), "p", addr); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(c.size))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					conn, err := net.Dial("tcp", addr)
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, conn)
					conn.Close()
					if err != nil || n != int64(c.size) {
						b.Fatalf("read %d of %d: %v", n, c.size, err)
					}
				}
			})
		}
	}
}
