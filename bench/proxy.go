package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpchaos/mcpchaos/faults"
)

// proxyReport is what the proxy process says: where it listens (first line only) and how
// many goroutines it runs.
type proxyReport struct {
	Listen     string `json:"listen,omitempty"`
	Goroutines int    `json:"goroutines"`
}

// ServeProxy is the proxy process: embedded Toxiproxy in front of upstream (a loopback
// host:port) behind its shield's relay, as a run puts them in front of the target. It writes its listen address, then
// answers every line from parent with its goroutine count, each time settled as the measuring
// process is before a reading, and ends at EOF.
func ServeProxy(ctx context.Context, upstream string, parent io.Reader, out io.Writer) error {
	if hostIP(upstream) == "" {
		return fmt.Errorf("bench talks to loopback targets only, not %q", upstream)
	}
	emb, err := faults.NewEmbedded()
	if err != nil {
		return err
	}
	inj := faults.Shield(emb) // as engine's set-up does: clients reach the relay, not Toxiproxy
	defer inj.Close()
	listen, err := inj.AddProxy(ctx, "bench", upstream)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	if err := enc.Encode(proxyReport{Listen: listen, Goroutines: quiet(report{}).Goroutines}); err != nil {
		return err
	}
	in := bufio.NewReader(parent)
	for {
		if _, err := in.ReadString('\n'); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := enc.Encode(proxyReport{Goroutines: quiet(report{}).Goroutines}); err != nil {
			return err
		}
	}
}
