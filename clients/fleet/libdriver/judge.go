package libdriver

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// The inside view of a client kind that runs a real MCP client library (gosdk, mcpgo, ts-sdk,
// ts-client): what the application got back from a tool call (a result, an error of some
// class, and when), judged against the server's truth and against what the library was seen
// doing on the wire (libWatch, filled by sdkObserver). The outside view is sdkObserver's.

// libOutcome is what one tool call gave the application.
type libOutcome struct {
	sent    time.Time
	took    time.Duration
	timeout time.Duration // the call's timeout (the library's own, or the one we set)
	err     error         // nil: a result
	isError bool          // the result said isError: the tool's own answer
	// answered: the error is an answer of the server (a JSON-RPC error object), not a
	// transport failure, a timeout or a client-side refusal.
	answered bool
	// gone: the application can tell from the error that its session is gone (the library's
	// documented signal: ErrSessionMissing, ErrSessionTerminated, an HTTP error carrying 404).
	gone bool
	// misclassified: the library's class for the error names something else than a session
	// death (a timeout, "not implemented", context canceled, an error its own errors.Is misses).
	misclassified bool
	timedOut      bool   // the error is the call's timeout
	class         string // the library's error class, for the export (LibraryInfo.ErrorClasses)
	// then is the class of the error a plain application's next request gets after the
	// library's signal of a dead session (the Go SDK's "client is closing"), "" for none.
	then string
}

// libWatch is what a library did with one session, seen from outside (sdkObserver) and read
// by the inside view.
type libWatch struct {
	staleReplay atomic.Int64 // unix ns of the last replay answered 200 after the session died
	lastCut     atomic.Int64 // unix ns of the last stream of the session that broke mid-read
	gets        atomic.Int64 // GETs sent for the session
	getsOpen    atomic.Int64 // GET streams open now
	lastGETEnd  atomic.Int64 // unix ns the last GET stream ended or failed
	surfaced    atomic.Bool  // the library told the application the session or connection ended
	deadStatus  atomic.Bool  // the server answered one of the session's requests with a dead status
	judged      atomic.Bool  // its listener was judged (once)
}

// listenerQuiet is how long a library's GET listener must have been silent (no GET open, none
// sent) for it to be judged stopped: longer than any library's backoff between two attempts
// (the Go SDK's 5th is about 5 s), so a listener that will still retry is not counted.
const listenerQuiet = 8 * time.Second

// judgeListener counts h's GET listener as silently dead when, as the application lets go of
// h at now, the library had opened one, none is open or has been tried for listenerQuiet, and
// the library never told the application that the session or its connection had ended.
func (c *client) judgeListener(h *libHeld, now time.Time) {
	w := &h.lib
	if !w.judged.CompareAndSwap(false, true) || w.gets.Load() == 0 || w.getsOpen.Load() > 0 || w.surfaced.Load() {
		return
	}
	if end := w.lastGETEnd.Load(); end != 0 && now.Sub(time.Unix(0, end)) >= listenerQuiet {
		c.e.Rec.Inc(metrics.ListenersSilentlyDead)
	}
}

// judgeCall counts one tool call of a library client on h, from the inside: results and
// their latency, failures and their latency, and the library failures (docs/metrics.md).
// It reports whether the session was already dead when the call returned.
func (c *client) judgeCall(ctx context.Context, h *libHeld, o libOutcome) (dead bool) {
	end := o.sent.Add(o.took)
	d, died := c.e.Truth.DeadSince(h.S.ID)
	dead = died && !d.After(end)
	if o.class != "" {
		c.d.noteClass(o.class)
	}
	if o.then != "" {
		c.d.noteClass(o.then)
	}
	if o.err == nil {
		c.e.Rec.Record(metrics.ToolCallLatency, c.Index(), o.took)
		c.NoteAnswered(ctx, end)
		if o.isError {
			c.e.Rec.Inc(metrics.ToolErrors)
		} else {
			c.e.Rec.Inc(metrics.ToolCallsOK)
		}
		if dead && c.replayedDuring(h, o.sent, end) {
			c.e.Rec.Inc(metrics.ReplayedErrorsDelivered)
		}
		return dead
	}
	c.e.Rec.Record(metrics.CallFailureLatency, c.Index(), o.took)
	cut := time.Unix(0, h.lib.lastCut.Load())
	if o.timedOut && o.timeout > 0 && o.took >= o.timeout*9/10 && (dead || !cut.Before(o.sent)) {
		c.e.Rec.Inc(metrics.CallsHung)
		c.e.Rec.Add(metrics.HungSeconds, int64(math.Round(o.took.Seconds())))
	}
	if o.answered && dead && c.replayedDuring(h, o.sent, end) {
		c.e.Rec.Inc(metrics.ReplayedErrorsDelivered)
	}
	if dead && o.misclassified {
		c.e.Rec.Inc(metrics.ErrorsMisclassified)
	}
	return dead
}

// replayedDuring reports whether the library took a replay of h's log, answered 200 after h
// had died, while the call was in flight: the call's answer can only have come from there.
func (c *client) replayedDuring(h *libHeld, sent, end time.Time) bool {
	at := h.lib.staleReplay.Load()
	return at != 0 && !time.Unix(0, at).Before(sent) && !time.Unix(0, at).After(end)
}

// libCall is the application's reaction to a library call's outcome, the same for every
// library kind: a session the application can tell is gone is given up (and connected anew,
// as the libraries' maintainers prescribe); any other failure is a tool failure, misattributed
// when the session was dead.
func (c *client) libCall(ctx context.Context, h *libHeld, o libOutcome) {
	if ctx.Err() != nil || (h.Ctx.Err() != nil && o.err != nil && (!h.lib.surfaced.Load() || errors.Is(o.err, context.Canceled))) {
		// The run ended, or the application gave the session up (and cancelled the call)
		// while the call ran. A call that failed because the library ended the session is
		// the application's error, and judged: the Go SDK, its GET answered 404, fails the
		// calls in flight with a closed connection that errors.Is(err, mcp.ErrSessionMissing)
		// misses.
		return
	}
	dead := c.judgeCall(ctx, h, o)
	if o.err == nil {
		return
	}
	if !o.gone {
		c.e.Books.Failed(o.err)
		c.e.Rec.Inc(metrics.ToolCallsFailed)
		switch {
		case dead:
			c.e.Rec.Inc(metrics.MisattributedErrors)
		case o.answered:
			c.e.Books.RefusedCall() // the server refused the call (invalid params, say)
		}
		return
	}
	c.Abandon(h.Held, true, true)
}

func (w *libWatch) cut() { w.lastCut.Store(time.Now().UnixNano()) }

func (w *libWatch) getEnded() {
	w.getsOpen.Add(-1)
	w.lastGETEnd.Store(time.Now().UnixNano())
}

// libSaw counts, from outside, what a library sent for h at sent and the status it got (0: a
// transport failure): its GETs (background requests when the session was dead already), a
// replay the server answered from a dead session's log, and a dead session's POST served 2xx.
func (c *client) libSaw(h *libHeld, method string, resume bool, sent time.Time, status int) {
	if c.e.Dead(status) {
		h.lib.deadStatus.Store(true)
	}
	d, died := c.e.Truth.DeadSince(h.S.ID)
	deadBefore := died && d.Before(sent)
	switch method {
	case http.MethodGet:
		h.lib.gets.Add(1)
		if status != http.StatusOK {
			h.lib.lastGETEnd.Store(time.Now().UnixNano())
		}
		if deadBefore {
			c.e.Rec.Inc(metrics.DeadSessionBackgroundRequests)
			if resume && status == http.StatusOK {
				h.lib.staleReplay.Store(time.Now().UnixNano())
			}
		}
	case http.MethodPost:
		if deadBefore && status/100 == 2 && c.e.SubstitutionKnown(h.S) {
			c.e.Rec.Inc(metrics.SilentSubstitutions)
		}
	}
}

// cutWatch notes when a call's SSE response stream breaks mid-read.
type cutWatch struct {
	io.ReadCloser
	h *libHeld
}

func (b *cutWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.h.lib.cut()
	}
	return n, err
}
