// Command mcpgo-peer serves one of mcpgopeer's mcp-go regimes on loopback for the tests
// (internal/peers starts it and reads its URL): it prints "MCPCHAOS_URL http://127.0.0.1:PORT/mcp"
// once it listens, and exits when its standard input closes (its test ended) or it is signalled.
//
//	mcpgo-peer -mode MODE [-ttl D] [-notify D] [-evict-after D]
//
// MODE is one of mcp-go, mcp-go-retained, mcp-go-stateless, mcp-go-ids, mcp-go-heartbeat
// (pings every 100 ms on each GET stream) and mcp-go-sorted-store (mcpgopeer.Handler's table).
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpchaos/mcpchaos/internal/peers/mcpgopeer"
)

func main() {
	mode := flag.String("mode", "mcp-go", fmt.Sprintf("the regime, one of %v", mcpgopeer.Modes))
	ttl := flag.Duration("ttl", 0, "how long a session may idle before the server ends it (0: never)")
	notify := flag.Duration("notify", 0, "how often every session is sent a log message (0: never)")
	evictAfter := flag.Duration("evict-after", 0, "mode mcp-go: the event store forgets events this old while their session lives (0: never)")
	flag.Parse()
	h, stop, err := mcpgopeer.Handler(*mode, *ttl, *notify, *evictAfter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo-peer:", err)
		os.Exit(2)
	}
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo-peer:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("MCPCHAOS_URL http://%s/mcp\n", ln.Addr())

	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(ended) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-ended:
	case <-sig:
	}
	_ = srv.Close()
}
