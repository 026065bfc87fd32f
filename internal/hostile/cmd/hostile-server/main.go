// Command hostile-server serves internal/hostile's misbehaviours on loopback until it is
// signalled, for benchmarks that run the real binary against them (bench/fault-timeline.sh).
// It prints its base URL (a behaviour is the path: BASE/event-64mib) on its first line.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpchaos/mcpchaos/internal/hostile"
)

func main() {
	h := hostile.Start()
	defer h.Close()
	fmt.Println(strings.TrimSuffix(h.URL(""), "/"))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
