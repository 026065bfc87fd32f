package faults

import (
	"context"
	"fmt"
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

// BenchmarkEmbeddedProxy measures a whole fault proxy as a run puts it in front of a server
// (embedded Toxiproxy behind its shield), beside the server directly: per connection (dial,
// one small reply, close), per MiB relayed, and per round trip of 200 bytes on a held
// connection.
func BenchmarkEmbeddedProxy(b *testing.B) {
	for _, proxied := range []bool{false, true} {
		via := func(b *testing.B, addr string) string {
			if !proxied {
				return addr
			}
			e, err := NewEmbedded()
			if err != nil {
				b.Fatal(err)
			}
			s := Shield(e)
			b.Cleanup(func() { s.Close() })
			if addr, err = s.AddProxy(context.Background(), "p", addr); err != nil {
				b.Fatal(err)
			}
			return addr
		}
		name := map[bool]string{false: "direct", true: "proxy"}[proxied]
		for _, size := range []int{64, 1 << 20} {
			b.Run(fmt.Sprintf("conn%d/%s", size, name), func(b *testing.B) {
				addr := via(b, sink(b, size))
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					conn, err := net.Dial("tcp", addr)
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, conn)
					conn.Close()
					if err != nil || n != int64(size) {
						b.Fatalf("read %d of %d: %v", n, size, err)
					}
				}
			})
		}
		// Connections set up 64 at a time, as bench's establishments are: what the proxy's
		// accept, dial and chains allow per second (b.N connections, ns/op per connection).
		b.Run("conns64/"+name, func(b *testing.B) {
			addr := via(b, sink(b, 64))
			b.ReportAllocs()
			b.SetParallelism(32) // 64 on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					conn, err := net.Dial("tcp", addr)
					if err != nil {
						b.Error(err)
						return
					}
					n, err := io.Copy(io.Discard, conn)
					conn.Close()
					if err != nil || n != 64 {
						b.Errorf("read %d of 64: %v", n, err)
						return
					}
				}
			})
		})
		b.Run("roundtrip/"+name, func(b *testing.B) {
			addr := via(b, tcpServer(b, func(c net.Conn) { io.Copy(c, c) }))
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			msg := make([]byte, 200)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
