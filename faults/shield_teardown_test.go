package faults

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// streamServer writes to each connection as fast as it is read, until the peer goes.
func streamServer(t *testing.T) string {
	chunk := make([]byte, 16<<10)
	return tcpServer(t, func(c net.Conn) {
		go io.Copy(io.Discard, c)
		c.SetDeadline(time.Now().Add(time.Minute)) // no connection outlives the test
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
}

// Connections that end while the proxy's toxics change (clients that read a little and go, as
// a hostile stream's clients are cut again and again) must not leave Toxiproxy with a link
// whose stages no longer match its chain: the next change indexed past the chain's end and
// crashed the process (`index out of range` in ToxicLink.AddToxic, once in about 160
// schedules on a busy machine). The relays hold back the ends they pass to Toxiproxy while a
// change is under way, and a change waits for the ends already passed to be seen through.
// It makes changes for 3 s (MCPCHAOS_CHURN_SECONDS sets it): without the relays' hold, a
// change takes about 50 µs, and every run crashed well within that.
func TestShieldChurnKeepsToxiproxysChainsWhole(t *testing.T) {
	churn := 3 * time.Second
	if n, err := strconv.Atoi(os.Getenv("MCPCHAOS_CHURN_SECONDS")); err == nil && n > 0 {
		churn = time.Duration(n) * time.Second
	}
	emb, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	inj := Shield(emb)
	t.Cleanup(func() { inj.Close() })
	ctx := context.Background()
	listen, err := inj.AddProxy(ctx, "p", streamServer(t))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() { // a client that reads a little, then goes: again and again
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", listen)
				if err != nil {
					continue
				}
				c.SetDeadline(time.Now().Add(10 * time.Second))
				io.CopyN(io.Discard, c, rand.Int64N(64<<10))
				c.Close()
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)
	kinds := []Toxic{
		{Type: "latency", Attributes: map[string]any{"latency": 1}},
		{Type: "bandwidth", Attributes: map[string]any{"rate": 100000}}, // KB/s
		{Type: "idle_timeout", Attributes: map[string]any{"timeout": 600000}},
	}
	var on []string
	made, start := 0, time.Now()
	for i := 0; time.Since(start) < churn; i++ {
		made++
		if len(on) < 3 && (len(on) == 0 || rand.IntN(2) == 0) {
			tx := kinds[rand.IntN(len(kinds))]
			tx.Name, tx.Stream = fmt.Sprintf("t%d", i), []string{Downstream, Downstream, Downstream, Upstream}[rand.IntN(4)]
			if err := inj.AddToxic(ctx, "p", tx); err != nil {
				t.Fatalf("change %d: %v", i, err)
			}
			on = append(on, tx.Name)
			continue
		}
		k := rand.IntN(len(on))
		if err := inj.RemoveToxic(ctx, "p", on[k]); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		on = append(on[:k], on[k+1:]...)
	}
	for _, name := range on {
		if err := inj.RemoveToxic(ctx, "p", name); err != nil {
			t.Fatalf("removing %s: %v", name, err)
		}
	}
	g := inj.relay("p").gate
	g.mu.Lock()
	t.Logf("%d changes in %v; %d waited for ends to be seen through, %d of them gave up after %v", made, time.Since(start).Round(time.Millisecond), g.waits, g.late, teardownWait)
	g.mu.Unlock()
	// The proxy still carries a new connection's bytes.
	c, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.CopyN(io.Discard, c, 64<<10); err != nil {
		t.Fatalf("after the churn, a new connection: %v", err)
	}
}
