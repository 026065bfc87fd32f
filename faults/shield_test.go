package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/loopback"
)

// hugeEvent serves SSE events of 64 MiB each, as fast as the client takes them.
func hugeEvent(t *testing.T) string {
	line := bytes.Repeat([]byte("x"), 1<<20)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			io.WriteString(w, "data: ")
			for range 64 {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
			io.WriteString(w, "\n\n")
		}
	})
	return loopback.Serve(t, h, nil)
}

// gzipBomb serves a gzip body that inflates to 256 MiB (about 250 KB on the wire), again and again.
func gzipBomb(t *testing.T) string {
	body := bombBody()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		for r.Context().Err() == nil {
			if _, err := w.Write(body); err != nil {
				return
			}
		}
	})
	return loopback.Serve(t, h, nil)
}

// bombBody is 256 gzip members of 1 MiB of zeros each (a gzip stream may hold many), built
// once: compressing the 256 MiB for each subtest took a minute of CPU under the race detector
// on a busy machine, which slowed this package and starved whatever ran beside it.
var bombBody = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	return bytes.Repeat(b.Bytes(), 256)
})

// hostileClients open, against listen, the clients that stall a toxic chain: one that reads
// nothing, one that reads a little and closes while the server still writes (again and again),
// and one that reads slowly. They end with the test.
func hostileClients(t *testing.T, listen string, stop <-chan struct{}) *sync.WaitGroup {
	req := "GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAccept-Encoding: gzip\r\n\r\n"
	var wg sync.WaitGroup
	open := func() net.Conn {
		c, err := net.Dial("tcp", listen)
		if err != nil {
			return nil
		}
		c.SetDeadline(time.Now().Add(30 * time.Second)) // no client outlives the test
		io.WriteString(c, req)
		return c
	}
	if c := open(); c != nil { // reads nothing
		t.Cleanup(func() { c.Close() })
	}
	wg.Add(2)
	go func() { // reads 100 KB, closes mid-stream, again
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c := open(); c != nil {
				io.CopyN(io.Discard, c, 100<<10)
				c.Close()
			}
		}
	}()
	go func() { // reads 4 KB at a time
		defer wg.Done()
		c := open()
		if c == nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4<<10)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond): // the slow reader's pace, not a synchronisation
			}
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	return &wg
}

// faultsBound is how late a fault may be applied or removed on a busy machine; the schedule
// plans them 100 ms apart, and an abandoned call (the old failure) takes CallBound.
const faultsBound = time.Second

// Against a server that sends 64 MiB events or a gzip bomb, and clients that read nothing,
// close mid-stream or read slowly, every fault of a schedule (Toxiproxy's own latency, which
// does not yield to interrupts, among them) is applied and removed on time, as its recorded
// timeline shows. MCPCHAOS_SHIELD_REPEAT=10 repeats it (scripts measure 10 of 10).
func TestShieldKeepsTheScheduleOnTime(t *testing.T) {
	repeat := 1
	if n, err := strconv.Atoi(os.Getenv("MCPCHAOS_SHIELD_REPEAT")); err == nil && n > 0 {
		repeat = n
	}
	for name, serve := range map[string]func(*testing.T) string{"64 MiB events": hugeEvent, "gzip bomb": gzipBomb} {
		for i := range repeat {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) { scheduleAgainst(t, serve(t)) })
		}
	}
}

func scheduleAgainst(t *testing.T, upstream string) {
	emb, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	inj := Shield(emb)
	t.Cleanup(func() { inj.Close() })
	listen, err := inj.AddProxy(context.Background(), "p", upstream)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	wg := hostileClients(t, listen, stop)
	defer wg.Wait()
	defer close(stop)
	// The streams are flowing before the first fault: wait for a client to have been cut (one
	// that closed mid-stream) or to be held to its pace.
	for i := 0; inj.Cuts() == 0 && len(inj.Stalled("p")) == 0 && i < 300; i++ {
		time.Sleep(10 * time.Millisecond) // polling a counter, bounded, not synchronising
	}
	scheduleOnTime(t, inj, Downstream)
}

// scheduleOnTime runs a schedule of ten changes 100 ms apart on proxy p of inj, its toxics on
// stream, and fails the test if any is applied or removed more than faultsBound after plan.
func scheduleOnTime(t *testing.T, inj *Shielded, stream string) {
	step := 100 * time.Millisecond
	sched := []Scheduled{
		{Fault: Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 5}}, Proxies: []string{"p"}, At: step, For: 2 * step},
		{Fault: Toxic{Name: "lb", Type: "idle_timeout", Attributes: map[string]any{"timeout": 600000}}, Proxies: []string{"p"}, At: 2 * step, For: 2 * step},
		{Fault: Toxic{Name: "thin", Type: "bandwidth", Attributes: map[string]any{"rate": 100000}}, Proxies: []string{"p"}, At: 4 * step, For: 2 * step},
		{Fault: Toxic{Name: "out", Type: TypeDown}, Proxies: []string{"p"}, At: 7 * step, For: step},
		{Fault: Toxic{Name: "slow2", Type: "latency", Attributes: map[string]any{"latency": 1}}, Proxies: []string{"p"}, At: 9 * step, For: step},
	}
	planned := map[string]time.Duration{}
	for _, s := range sched {
		planned[s.Fault.Name+"+"] = s.At
		planned[s.Fault.Name+"-"] = s.At + s.For
	}
	for i := range sched {
		if sched[i].Fault.Type != TypeDown {
			sched[i].Fault.Stream = stream
		}
	}
	var mu sync.Mutex
	var changes []Change
	// Neither the context nor the calls are bounded tightly: a starved process must finish its
	// schedule, for the meter to tell its lateness from a held call's.
	ctx, cancel := context.WithTimeout(context.Background(), 11*step+2*CallBound)
	defer cancel()
	timed := &timedInjector{Injector: inj}
	start := time.Now()
	stalls := meterStalls(t, start)
	err := runSchedule(ctx, timed, start, sched, func(c Change) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
	}, 2*CallBound)
	stalls.end()
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	if len(changes) != 2*len(sched) {
		t.Fatalf("%d changes, want %d: %+v", len(changes), 2*len(sched), changes)
	}
	worst, starvedFor := time.Duration(0), time.Duration(0)
	for _, c := range changes {
		key := c.Fault + map[bool]string{true: "+", false: "-"}[c.Added]
		late := c.At - planned[key]
		starved := stalls.stalled(planned[key], c.At)
		worst, starvedFor = max(worst, late), max(starvedFor, starved)
		t.Logf("%-7s %v after plan (the process starved %v of it)", key, late, starved)
		switch {
		case c.Err != nil || late < 0:
			t.Errorf("%s on %s: %v after plan (%v)", key, c.Proxy, late, c.Err)
		case late-starved > faultsBound:
			t.Errorf("%s on %s: %v late, %v of it while the process ran its timers: held, not starved", key, c.Proxy, late, late-starved)
		case late > faultsBound:
			t.Logf("%s: %v late, all but %v of it with the process starved (a control timer as late): the machine's, not a held call", key, late, late-starved)
		}
	}
	t.Logf("every fault applied and removed, the latest %v after plan (the most starved %v), the longest call %v; %d clients cut", worst, starvedFor, timed.longest, inj.Cuts())
}

// timedInjector records the longest call, to tell a Toxiproxy that held a call from a machine
// too busy to run the schedule's timer on time.
type timedInjector struct {
	Injector
	longest time.Duration
}

func (ti *timedInjector) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	defer ti.time(time.Now())
	return ti.Injector.AddToxic(ctx, proxy, t)
}

func (ti *timedInjector) RemoveToxic(ctx context.Context, proxy, name string) error {
	defer ti.time(time.Now())
	return ti.Injector.RemoveToxic(ctx, proxy, name)
}

func (ti *timedInjector) time(begin time.Time) { ti.longest = max(ti.longest, time.Since(begin)) }

// wedged is an injector whose toxic calls never return, as Toxiproxy does when a chain cannot
// be paused; its proxy is a server that sends 16 MiB and holds the connection.
type wedged struct {
	Injector
	upstream string
	release  chan struct{}
}

func (w *wedged) AddProxy(context.Context, string, string) (string, error) { return w.upstream, nil }
func (w *wedged) AddToxic(context.Context, string, Toxic) error {
	<-w.release
	return nil
}
func (w *wedged) Close() error { return nil }

// If Toxiproxy itself cannot answer, the schedule says so and names the connections whose
// clients were not reading (queued, or cut for it).
func TestAbandonedCallNamesStalledConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write(make([]byte, 16<<20)) // past ShieldBuffer and every socket buffer: cut
			defer c.Close()
		}
	}()
	w := &wedged{upstream: ln.Addr().String(), release: make(chan struct{})}
	defer close(w.release)
	inj := Shield(w)
	defer inj.Close()
	listen, err := inj.AddProxy(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	// A client that reads nothing, with a small receive buffer, so that the relay queues.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; len(inj.Stalled("p")) == 0 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond) // polling the relay's queue, bounded
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = runSchedule(ctx, inj, time.Now(), []Scheduled{
		{Fault: Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 1}}, Proxies: []string{"p"}},
	}, nil, 100*time.Millisecond)
	want := "stalled connections: " + c.LocalAddr().String() + " (proxy p, cut: it left "
	if err == nil || !errors.Is(err, ErrAbandoned) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want it abandoned naming %s", err, want)
	}
}
