package fleet

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/hostile"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// A fleet against the hostile server: errors are counted by kind, memory stays bounded, the
// run ends promptly when its context does, and a fleet against a healthy server beside it is
// not held up.
func TestHostileFleetBounded(t *testing.T) {
	h := hostile.New(t)
	good := startTarget(t, refserver.Config{SessionTTL: time.Minute})
	pol, err := policy.New("probe", policy.Config{Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	cfg := GroupConfig{Clients: 2, Policy: pol, Probe: "ping", DeadStatuses: []int{404}, RetryBackoff: 10 * time.Millisecond,
		CallEvery: 20 * time.Millisecond, Tool: "echo", Arguments: map[string]any{}, ReconnectDelay: 10 * time.Millisecond, ReconnectMax: 50 * time.Millisecond}
	always := func(time.Duration) bool { return true }
	nobody := truth.Func(func(string) (time.Time, bool) { return time.Time{}, false })

	behaviours := []string{"giant-event", "endless-line", "gzip-bomb-sse", "huge-header", "storm-500", "storm-429",
		"reset-mid-event", "stalled-sse-reply", "redirect-off-origin", "huge-session-id", "absurd-retry", "get-409"}
	var peak atomic.Uint64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var recs []*metrics.Recorder
	var fleets []*Fleet
	for _, b := range behaviours {
		rec := metrics.NewRecorder(b, "probe", cfg.Clients)
		recs = append(recs, rec)
		c := cfg
		c.Name = b
		fleets = append(fleets, New(c, hostileEndpoint(t, h.URL(b)), rec, nobody, always))
	}
	// The official Go SDK's client (policy gosdk) on the same transport.
	sdkPol, err := policy.New("gosdk", policy.Config{Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	var sdkRecs []*metrics.Recorder
	for _, b := range []string{"giant-event", "redirect-off-origin", "stalled-sse-reply", "huge-header"} {
		rec := metrics.NewRecorder("sdk-"+b, "gosdk", cfg.Clients)
		sdkRecs = append(sdkRecs, rec)
		c := cfg
		c.Name, c.Policy = "sdk-"+b, sdkPol
		fleets = append(fleets, New(c, hostileEndpoint(t, h.URL(b)), rec, nobody, always))
	}
	goodRec := metrics.NewRecorder("good", "probe", cfg.Clients)
	gc := cfg
	gc.Name, gc.Arguments = "good", nil // from the reference server's inputSchema
	fleets = append(fleets, New(gc, hostileEndpoint(t, good.URL), goodRec, nobody, always))
	// The baseline includes the recorders' histograms (allocated up front, a fixed cost per
	// group), so that what grows is what the servers' behaviour made the clients hold.
	runtime.GC()
	before := liveHeap()
	for _, f := range fleets {
		wg.Go(func() { f.Run(ctx, time.Now()) })
	}

	// What each misbehaviour must be classified as.
	want := map[string]metrics.ErrorKind{
		"giant-event": metrics.ErrTooLarge, "endless-line": metrics.ErrTooLarge, "huge-header": metrics.ErrTooLarge,
		"storm-500": metrics.ErrStatus, "storm-429": metrics.ErrStatus, "redirect-off-origin": metrics.ErrRedirect,
		"huge-session-id": metrics.ErrBadSessionID, "reset-mid-event": metrics.ErrReset, "stalled-sse-reply": metrics.ErrTimeout,
	}
	// The first problem line of each group named here must name what the server did.
	firstProblem := map[string]string{
		"giant-event": "the server sent an SSE event larger than mcpchaos reads", "endless-line": "the server sent an SSE event larger than mcpchaos reads",
		"gzip-bomb-sse": "the server sent a gzip body", "huge-header": "the server sent more than mcpchaos reads",
		"redirect-off-origin": "the server redirected off its origin", "huge-session-id": "the server gave a session id that is not visible ASCII or too long",
		"storm-500": "(a status storm)", "storm-429": "(a status storm)",
		"reset-mid-event": "reset the connection in the middle of an SSE event", "absurd-retry": "asked clients to wait an absurd time",
		"get-409": "answered the GET stream with HTTP 409",
	}
	// Watch the heap while the fleets run, until the healthy fleet has made calls and every
	// hostile group has seen errors, of its kind where it has one: on a busy machine timeouts
	// come first (a bounded poll).
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		runtime.GC() // live heap, not garbage awaiting collection
		if l := liveHeap(); l > peak.Load() {
			peak.Store(l)
		}
		ready := goodRec.Get(metrics.ToolCallsOK) >= 5
		for i, r := range recs[:len(recs)-1] { // absurd-retry and get-409 below
			k, ok := want[behaviours[i]]
			ready = ready && totalErrors(r) > 0 && (!ok || r.Errors(k) > 0)
			if _, named := firstProblem[behaviours[i]]; named {
				ready = ready && len(ProblemsOf(fleets[i:i+1], false)) > 0
			}
		}
		if ready {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling, not synchronising
	}
	cancel()
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("fleets did not stop within 5s of the end of the run")
	}
	for i, r := range recs {
		b := behaviours[i]
		var kinds []string
		for k := range metrics.ErrOther + 1 {
			if n := r.Errors(k); n > 0 {
				kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
			}
		}
		t.Logf("%-20s %v", b, kinds)
	}
	for _, r := range sdkRecs {
		t.Logf("%-20s errors %d, sessions started %d", r.Name, totalErrors(r), r.Get(metrics.SessionsStarted))
	}
	if n := goodRec.Get(metrics.ToolCallsOK); n < 5 {
		t.Errorf("healthy fleet beside the hostile ones made %d tool calls", n)
	}
	for i, b := range behaviours {
		if k, ok := want[b]; ok && recs[i].Errors(k) == 0 {
			t.Errorf("%s: no %s errors counted", b, k)
		}
	}
	if h.OffOrigin.Load() != 0 {
		t.Errorf("a redirect was followed off the origin")
	}
	// The run's first problem line for the group names what the server did.
	for i, b := range behaviours {
		want, ok := firstProblem[b]
		if !ok {
			t.Logf("%s: problems %q", b, ProblemsOf(fleets[i:i+1], false))
			continue
		}
		p := ProblemsOf(fleets[i:i+1], false)
		if len(p) == 0 || !strings.HasPrefix(p[0], "group "+b+": ") || !strings.Contains(p[0], want) {
			t.Errorf("%s: first problem %q, want it to say %q", b, p, want)
		} else {
			t.Logf("%s: %s", b, p[0])
		}
	}
	// 256 MB events, a 1 GiB gzip bomb and 200 KB headers were thrown at 32 clients: the live
	// heap must not have grown by anything like that. The caps allow about 64 KiB per event,
	// body and header block in flight. One event held whole would be 256 MB.
	const bound = 96 << 20
	if grew := int64(peak.Load()) - int64(before); grew > bound {
		t.Errorf("live heap grew by %d MB during the run, over %d MB", grew>>20, bound>>20)
	}
	t.Logf("live heap: %d MB before, %d MB peak", before>>20, peak.Load()>>20)
}

func totalErrors(r *metrics.Recorder) int64 {
	var n int64
	for k := range metrics.ErrOther + 1 {
		n += r.Errors(k)
	}
	return n
}

// hostileEndpoint reaches one behaviour through the HTTP client the tool builds for targets.
func hostileEndpoint(t *testing.T, raw string) *wire.Endpoint {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := wire.NewHTTPClient(wire.Conn{URL: u, MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	return &wire.Endpoint{URL: raw, HTTP: hc, Protocol: wire.Protocol20251125, RequestTimeout: 400 * time.Millisecond,
		MaxBody: 64 << 10, MaxEvent: 64 << 10, ClientName: "hostile-test"}
}

// liveHeap is the heap the last GC found live (runtime/metrics /gc/heap/live:bytes). Not
// HeapInuse: 32 clients reading hostile streams allocate tens of MB between a GC's end and a
// MemStats reading, and HeapInuse counts those spans too (it read 88 to 109 MB of "growth"
// while the live heap at the same peak was flat).
func liveHeap() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}
