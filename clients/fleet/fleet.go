package fleet

import (
	"container/heap"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/fleet/libdriver"
	"github.com/mcpchaos/mcpchaos/clients/policy"
	"github.com/mcpchaos/mcpchaos/clients/truth"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/guard"
	"github.com/mcpchaos/mcpchaos/internal/sleep"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// GroupConfig is one client group's settings, resolved.
type GroupConfig struct {
	Name    string
	Clients int
	Ramp    time.Duration // clients start evenly over it
	// Policy decides after drops and failures; nil for a ClientGoSDK group, whose sessions are
	// the Go SDK client's and whose decisions are that client's.
	Policy       policy.Policy
	Probe        string // one of ProbeMethods()
	DeadStatuses []int
	RetryBackoff time.Duration // first retry's wait; doubles per retry
	CallEvery    time.Duration // each request loop's period while calls are on
	Tool         string        // the tool called
	// Arguments are the tool call's arguments, with placeholders ({{client}}, {{seq}},
	// {{group}}); nil: the smallest instance of the tool's inputSchema (from tools/list).
	Arguments map[string]any
	// NoProgressTokens leaves _meta.progressToken off tool calls (it is sent by default).
	NoProgressTokens bool
	// LogLevel, when set, is sent with logging/setLevel after initialize to a server that
	// offers logging.
	LogLevel string
	// Roots, when not nil, are advertised and answered to roots/list; Replies are scripted
	// results for sampling/createMessage and elicitation/create (otherwise refused).
	Roots       []wire.Root
	Replies     map[string]json.RawMessage
	Concurrency int // request loops per client
	// ReconnectDelay is the wait before reconnecting when the server sent no retry: field;
	// ReconnectMax caps it, the server's retry value, and the backoff after failed attempts.
	ReconnectDelay time.Duration
	ReconnectMax   time.Duration
	// Kind is the group's policy name; a client library's (ClientGoSDK, ClientMCPGo, ClientTSSDK,
	// ClientTSClient) picks the driver that runs it. LibraryOptions are that library's options,
	// checked by policy.CheckLibraryOption.
	Kind           string
	LibraryOptions map[string]any
	// Phases is how many phases the run has, and PhaseAt which one is in force at a time since
	// the start: the group counts its turns and its calls not made per phase (PhaseTurns).
	// PhaseAt nil: one phase.
	Phases  int
	PhaseAt func(elapsed time.Duration) int
	// Churn makes the clients end their sessions and open new ones (churn.go); zero: none.
	Churn Churn
}

// Fleet is one client group: its clients, the scheduler that drives their request loops,
// and the recorder they report to.
type Fleet struct {
	cfg     GroupConfig
	ep      *wire.Endpoint
	rec     *metrics.Recorder
	truth   truth.Truth
	policy  policy.Policy
	env     *drive.Env   // what its driver is handed (driver.go)
	drv     drive.Driver // the driver of its clients' kind (pickDriver)
	calls   func(elapsed time.Duration) bool
	clients []*Client
	args    toolArgs // learnt from the tool's inputSchema when the group gives none
	samples errorSamples
	deaths  [truth.DeathSources]atomic.Int64 // deaths counted, by how their time was obtained
	// refusedCalls counts surfaced tool calls the server refused (fleetreport.go).
	refusedCalls atomic.Int64
	// refusedWith counts the session-scoped requests (calls, probes, GETs, replays) answered
	// with each 4xx or 5xx status that dead_statuses do not list (RefusedWith).
	refusedWith [200]atomic.Int64
	// turnsBy and notMadeBy count, per phase, the turns of calls phases and those that passed
	// with no live session to call on (calls_not_made); notStartedBy the turns that came before
	// their client's first session was live (calls_not_made too: a loaded machine initializes
	// late, and a phase that made few of its turns must not pass as measured).
	turnsBy, notMadeBy, skippedBy, notStartedBy []atomic.Int64
	// callsDue counts the call turns that came during a phase that makes calls, made or not:
	// a group with turns and no call made is a problem (problems.go), never a quiet 0 / 0.
	callsDue atomic.Int64

	churn *churner // nil: the clients keep their sessions (churn.go)

	protoMu  sync.Mutex
	protocol string
	lib      *libdriver.Driver // a library kind's driver (library.go); nil for other kinds
}

// New prepares a group. calls says, for a time since the start, whether request loops
// should make calls then (the workload's phases).
func New(cfg GroupConfig, ep *wire.Endpoint, rec *metrics.Recorder, deaths truth.Truth, calls func(time.Duration) bool) *Fleet {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.ReconnectDelay <= 0 {
		cfg.ReconnectDelay = 100 * time.Millisecond
	}
	if cfg.ReconnectMax < cfg.ReconnectDelay {
		cfg.ReconnectMax = max(cfg.ReconnectDelay, time.Second)
	}
	if ep.Responder == nil {
		ep.Responder = &wire.Responder{Roots: cfg.Roots, Replies: cfg.Replies}
	}
	ep.Responder.Recorder = rec
	cfg.Phases = max(cfg.Phases, 1)
	f := &Fleet{cfg: cfg, ep: ep, rec: rec, truth: deaths, policy: cfg.Policy, calls: calls,
		turnsBy: make([]atomic.Int64, cfg.Phases), notMadeBy: make([]atomic.Int64, cfg.Phases),
		skippedBy: make([]atomic.Int64, cfg.Phases), notStartedBy: make([]atomic.Int64, cfg.Phases), churn: newChurner(cfg.Churn, cfg.Clients)}
	f.clients = make([]*Client, cfg.Clients)
	for i := range f.clients {
		f.clients[i] = &Client{f: f, idx: i, mine: make([]*drive.Held, cfg.Concurrency), turns: make([]loopTurns, cfg.Concurrency)}
	}
	f.env = f.newEnv()
	f.drv = f.pickDriver()
	return f
}

// refused tells a learning Truth that the server answered a request of the session, sent at
// sent, with a dead status: the session died at or before then. The session's first such
// answer gives its observed life (session_life), recorded under key (the client).
func (f *Fleet) refused(s *wire.Session, sent time.Time, key int) {
	if t, ok := f.truth.(truth.Learner); ok {
		if life, first := t.ObserveDead(s.ID, sent); first {
			f.rec.Record(metrics.SessionLife, key, life)
		}
	}
}

// done tells a learning Truth that the client is done with the session.
func (f *Fleet) done(s *wire.Session) {
	if t, ok := f.truth.(truth.Learner); ok {
		t.Forget(s.ID)
	}
}

func (f *Fleet) noteProtocol(p string) {
	f.protoMu.Lock()
	if f.protocol == "" {
		f.protocol = p
	}
	f.protoMu.Unlock()
}

// Protocol is the protocol version the server negotiated with this group's first session.
func (f *Fleet) Protocol() string {
	f.protoMu.Lock()
	defer f.protoMu.Unlock()
	return f.protocol
}

// startOffset is when client i starts, from the run's start.
func (f *Fleet) startOffset(i int) time.Duration {
	if f.cfg.Clients <= 1 {
		return 0
	}
	return time.Duration(int64(f.cfg.Ramp) * int64(i) / int64(f.cfg.Clients))
}

// Run starts the clients over the ramp, drives their request loops, and returns when ctx ends
// and every client has stopped and ended its session (each DELETE bounded by the request
// timeout).
func (f *Fleet) Run(ctx context.Context, start time.Time) {
	if f.churn != nil {
		f.churn.start = start
	}
	var clients sync.WaitGroup
	var sched sync.WaitGroup
	sched.Go(func() {
		defer guard.Catch(ctx, "fleet scheduler "+f.cfg.Name)
		f.schedule(ctx, start)
	})
	for i, c := range f.clients {
		if !sleep.For(ctx, time.Until(start.Add(f.startOffset(i)))) {
			break
		}
		f.rec.Enter(metrics.StateStarting)
		clients.Add(1)
		go c.run(ctx, &clients)
	}
	<-ctx.Done()
	clients.Wait()
	sched.Wait()
	if f.churn != nil {
		f.churn.wg.Wait() // a DELETE under way ends within its request timeout
	}
	f.finish()
	f.Close()
}

// finish settles every client's last session and DELETEs the live ones, a few at a time.
func (f *Fleet) finish() {
	end := time.Now()
	ctx := context.Background()
	work := make(chan *Client)
	var wg sync.WaitGroup
	for range min(64, len(f.clients)) {
		wg.Go(func() {
			for c := range work {
				c.finish(ctx, end)
			}
		})
	}
	for _, c := range f.clients {
		work <- c
	}
	close(work)
	wg.Wait()
}

// schedule fires each request loop of each client every CallEvery while calls are on. One
// goroutine keeps the timetable; a bounded pool of workers makes the calls; a loop whose last
// call is still running skips its turn, which is counted (calls_skipped) and timed from that
// turn in tool_call_latency_corrected when the running call gets its result.
func (f *Fleet) schedule(ctx context.Context, start time.Time) {
	type job struct {
		c, k int
		due  time.Time
	}
	conc := f.cfg.Concurrency
	period := f.cfg.CallEvery
	// At most 256 calls run at once; a call's goroutine exists only while it runs, so an idle
	// fleet costs no worker goroutines.
	slots := make(chan struct{}, 256)
	var calls sync.WaitGroup
	defer calls.Wait()
	dispatch := func(j job) bool {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		calls.Go(func() {
			defer func() { <-slots }()
			defer guard.Catch(ctx, "call "+f.cfg.Name)
			c := f.clients[j.c]
			f.rec.Record(metrics.TurnLag, c.idx, c.turns[j.k].begin(time.Now()))
			t := turnCall{phase: f.phaseAt(j.due.Sub(start))}
			defer func() {
				c.turns[j.k].release(t.answered, t.lag.Total(), period, func(d time.Duration) {
					f.rec.Record(metrics.ToolCallLatencyCorrected, c.idx, d)
				})
			}()
			f.drv.Tick(withTurnCall(ctx, &t), c, j.k)
		})
		return true
	}

	q := make(timetable, 0, f.cfg.Clients*conc)
	for i := range f.clients {
		for k := range conc {
			// Loops of one client are spread over the period, so a second loop's call comes
			// while the first one's retries may be under way.
			first := f.startOffset(i) + period/time.Duration(conc)*time.Duration(k) + period/2
			q = append(q, slot{due: start.Add(first), c: i, k: k})
		}
	}
	heap.Init(&q)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for len(q) > 0 {
		next := &q[0]
		timer.Reset(time.Until(next.due))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		for len(q) > 0 && !q[0].due.After(now) {
			s := &q[0]
			c := f.clients[s.c]
			if f.calls(s.due.Sub(start)) {
				if c.wasLive.Load() { // turns before its first session are not the server's (notMade)
					f.turnsBy[f.phaseAt(s.due.Sub(start))].Add(1)
				} else {
					f.notStarted(s.due.Sub(start))
				}
				f.callsDue.Add(1)
				if !c.turns[s.k].take(s.due, period) {
					f.rec.Inc(metrics.CallsSkipped)
					if c.wasLive.Load() {
						f.skippedBy[f.phaseAt(s.due.Sub(start))].Add(1)
					}
				} else if !dispatch(job{s.c, s.k, s.due}) {
					c.turns[s.k].release(time.Time{}, 0, period, nil)
					return
				}
			}
			s.due = s.due.Add(period)
			heap.Fix(&q, 0)
		}
	}
}

// phaseAt is the index of the phase in force at el (0 without a PhaseAt), within bounds.
func (f *Fleet) phaseAt(el time.Duration) int {
	if f.cfg.PhaseAt == nil {
		return 0
	}
	return min(max(f.cfg.PhaseAt(el), 0), len(f.turnsBy)-1)
}

// notMade counts a turn that passed with no live session to call on: the client was
// reconnecting or re-initializing. Turns before the client's first session is live are not
// counted: how soon a client starts is the machine's (a loaded one initializes late), not
// the server's.
func (f *Fleet) notMade(ctx context.Context, c *Client) {
	if !c.wasLive.Load() {
		return
	}
	f.rec.Inc(metrics.CallsNotMade)
	if t, ok := ctx.Value(turnKey{}).(*turnCall); ok {
		f.notMadeBy[t.phase].Add(1)
	}
}

// PhaseTurns is what a group's request loops did in one phase with calls.
type PhaseTurns struct {
	Turns   int64 `json:"turns"`          // turns its schedule gave them
	NotMade int64 `json:"calls_not_made"` // of them, turns with no live session to call on
	Skipped int64 `json:"calls_skipped"`  // of them, turns missed behind a call still running
	// NotStarted counts the phase's turns that came before their client's first session was
	// live, beside Turns (which has only the turns of clients with a session): the clients
	// started late (a busy machine, a slow initialize). They are counted in calls_not_made.
	NotStarted int64 `json:"calls_not_started"`
}

// PhaseTurns returns the group's turns by phase index (GroupConfig.PhaseAt).
func (f *Fleet) PhaseTurns() []PhaseTurns {
	out := make([]PhaseTurns, len(f.turnsBy))
	for i := range out {
		out[i] = PhaseTurns{Turns: f.turnsBy[i].Load(), NotMade: f.notMadeBy[i].Load(), Skipped: f.skippedBy[i].Load(), NotStarted: f.notStartedBy[i].Load()}
	}
	return out
}

type slot struct {
	due  time.Time
	c, k int
}

// timetable is a min-heap of slots by due time.
type timetable []slot

func (t timetable) Len() int           { return len(t) }
func (t timetable) Less(i, j int) bool { return t[i].due.Before(t[j].due) }
func (t timetable) Swap(i, j int)      { t[i], t[j] = t[j], t[i] }
func (t *timetable) Push(x any)        { *t = append(*t, x.(slot)) }
func (t *timetable) Pop() any {
	old := *t
	x := old[len(old)-1]
	*t = old[:len(old)-1]
	return x
}

// Census counts the group's clients by state now, and those that believe a session is live
// that has in truth died.
type Census struct {
	Starting, Live, Reconnecting, Reinit, Stopped int
	BelievedLiveButDead                           int
}

// Census walks the clients; it takes each client's lock briefly, so call it from a ticker,
// not a hot path.
func (f *Fleet) Census() Census {
	var cs Census
	for _, c := range f.clients {
		c.mu.Lock()
		st, h := c.state, c.cur
		c.mu.Unlock()
		switch st {
		case metrics.StateStarting:
			cs.Starting++
		case metrics.StateLive:
			cs.Live++
			if h != nil {
				if _, dead := f.truth.DeadSince(h.S.ID); dead {
					cs.BelievedLiveButDead++
				}
			}
		case metrics.StateReconnecting:
			cs.Reconnecting++
		case metrics.StateReinit:
			cs.Reinit++
		case metrics.StateStopped:
			cs.Stopped++
		}
	}
	return cs
}

// Sessions returns the sessions the clients hold now (for benchmarks and inspection; the
// fleet's own request loops do not use it).
func (f *Fleet) Sessions() []*wire.Session {
	out := make([]*wire.Session, 0, len(f.clients))
	for _, c := range f.clients {
		c.mu.Lock()
		if c.cur != nil {
			out = append(out, c.cur.S)
		}
		c.mu.Unlock()
	}
	return out
}
