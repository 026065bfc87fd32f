package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// The client library kinds beyond the Go SDK's: mcp-go's client in process, and the
// TypeScript SDKs' clients in node workers (clients/tsworker.ClientsPerWorker to a worker). They are
// held by a fleet of that kind, as a run holds them; a TypeScript kind's memory and CPU are
// its measuring process's plus its node workers' (their PIDs travel in the reports).
const (
	MCPGo    = policy.ClientMCPGo
	TSSDK    = policy.ClientTSSDK
	TSClient = policy.ClientTSClient
)

// Kinds lists the client kinds a measurement can hold.
func Kinds() []string { return []string{Lean, GoSDK, MCPGo, TSSDK, TSClient} }

func knownKind(k string) bool { return slices.Contains(Kinds(), k) }

type libHolder struct {
	f        *fleet.Fleet
	cancel   context.CancelFunc
	done     chan struct{}
	sessions []*wire.Session
}

// prepareLib makes the fleet and starts its node workers (before the baseline, so that a
// worker's own footprint is not counted as the sessions'); the function it returns
// establishes the sessions.
func prepareLib(ctx context.Context, endpoint string, o Options, n *counts) (func(context.Context) (holder, error), []int, error) {
	tr := wire.NewTransport(o.Workers * 2)
	n.countDials(tr, o.Via)
	ep := &wire.Endpoint{
		URL:            endpoint,
		HTTP:           &http.Client{Transport: wire.Streaming(tr)},
		Protocol:       wire.Protocol20251125,
		RequestTimeout: 30 * time.Second,
		MaxBody:        4 << 20,
		MaxEvent:       1 << 20,
		ClientName:     "mcpchaos-bench",
	}
	rec := metrics.NewRecorder("bench", o.Client, o.Sessions)
	f := fleet.New(fleet.GroupConfig{
		Name: "bench", Clients: o.Sessions, DeadStatuses: []int{404, 410}, CallEvery: time.Hour, Tool: "echo",
		Concurrency: 1, Kind: o.Client,
	}, ep, rec, truth.Func(func(string) (time.Time, bool) { return time.Time{}, false }),
		func(time.Duration) bool { return false }) // the bench drives the calls itself
	if err := f.Prepare(ctx); err != nil {
		f.Close()
		return nil, nil, err
	}
	return func(ctx context.Context) (holder, error) { return holdLib(ctx, o, f, rec) }, f.WorkerPIDs(), nil
}

func holdLib(ctx context.Context, o Options, f *fleet.Fleet, rec *metrics.Recorder) (holder, error) {
	runCtx, cancel := context.WithCancel(ctx)
	h := &libHolder{f: f, cancel: cancel, done: make(chan struct{})}
	go func() { f.Run(runCtx, time.Now()); close(h.done) }()
	deadline := time.Now().Add(5 * time.Minute)
	for f.Census().Live < o.Sessions || rec.Get(metrics.SessionsStarted) < int64(o.Sessions) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			h.close()
			return nil, fmt.Errorf("only %d of %d %s sessions established", f.Census().Live, o.Sessions, o.Client)
		}
		time.Sleep(5 * time.Millisecond) // a bounded poll of the fleet's census
	}
	h.sessions = f.Sessions()
	return h, nil
}

func (h *libHolder) call(ctx context.Context, i int) error {
	return h.f.Call(ctx, i%len(h.sessions), map[string]any{"text": "bench"})
}

// ping times mcpchaos's own ping on the library's session: the libraries have no probe.
func (h *libHolder) ping(ctx context.Context) (time.Duration, error) {
	return timedPing(ctx, h.sessions[0])
}

func (h *libHolder) sessionID() string { return h.sessions[0].ID }
func (h *libHolder) protocol() string  { return h.sessions[0].Protocol }
func (h *libHolder) close()            { h.cancel(); <-h.done }
