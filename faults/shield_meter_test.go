package faults

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/servertime"
)

// The server relay times the server by the kernel's clock: a sample covers the server's own
// handling and leaves out what stands before the relay (here a 50 ms latency toxic of
// Toxiproxy on the replies, as a starved proxy or client would add), so the client's raw time
// exceeds it by the toxic's latency at least.
func TestMeterServerTimesTheServerOnly(t *testing.T) {
	if !servertime.Supported {
		t.Skip("kernel receive timestamps are read on Linux only")
	}
	const handling, toxic = 20 * time.Millisecond, 50 * time.Millisecond
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-time.After(handling) // the server's work
		io.WriteString(w, "ok")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	emb, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	inj := Shield(emb)
	t.Cleanup(func() { inj.Close() })
	listen, err := inj.AddProxy(context.Background(), "p", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var samples []time.Duration
	var smu sync.Mutex
	m := &servertime.Meter{Record: func(d time.Duration) { smu.Lock(); samples = append(samples, d); smu.Unlock() }}
	if !inj.MeterServer("p", m) {
		t.Fatal("MeterServer: no server relay for an embedded Toxiproxy")
	}
	if err := inj.AddToxic(context.Background(), "p", Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": int(toxic / time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	const requests = 6
	var raws []time.Duration
	for range requests {
		start := time.Now()
		resp, err := client.Get("http://" + listen + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		raws = append(raws, time.Since(start))
	}
	client.CloseIdleConnections()
	smu.Lock()
	defer smu.Unlock()
	// The kernel stamps segments a moment after the first socket asks, and a write preempted
	// past servertime.MaxWriteSpan is left out: a few exchanges may be missing, not most.
	if len(samples)+int(m.Unsure()) != requests || len(samples) < requests/2 {
		t.Fatalf("%d exchanges timed, %d left out, of %d requests", len(samples), m.Unsure(), requests)
	}
	// Each timed exchange is at most its request's raw time less the toxic, so their sum is at
	// most every request's raw time less the toxic once per timed exchange.
	var sumS, sumRaw time.Duration
	for _, r := range raws {
		sumRaw += r
	}
	for _, d := range samples {
		sumS += d
		if d < handling {
			t.Errorf("server_latency %v, shorter than the server's %v of work", d, handling)
		}
	}
	if sumS > sumRaw-time.Duration(len(samples))*toxic {
		t.Errorf("server_latency %v in all, the clients' %v: the proxy's %v toxic is in it", samples, raws, toxic)
	}
}
