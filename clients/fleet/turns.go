package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// loopTurns is one request loop's place on its schedule: whether a call is running, the turn
// it was made for, and the turns that passed while it ran. The scheduler takes turns; the
// call's goroutine ends them. Missed turns are what coordinated omission hides: a loop whose
// call stalls sends nothing in the meantime, so timing only the calls sent would leave the
// stall out (wrk2 and HdrHistogram correct the same way; here from the real turn times).
type loopTurns struct {
	mu     sync.Mutex
	busy   bool
	due    time.Time   // the running call's turn: its intended start
	began  time.Time   // when the running call's goroutine began (after the generator's own lag)
	missed []missedRun // turns passed while it ran, in order
}

// missedRun is n consecutive missed turns, period apart from first. Runs keep the memory of a
// long stall bounded (one run per stretch of the schedule without a phase change).
type missedRun struct {
	first time.Time
	n     int
}

// take claims the turn due for the loop: true if the loop was idle and now runs a call for
// it; false if its previous call still runs, and the turn is noted as missed.
func (l *loopTurns) take(due time.Time, period time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.busy {
		l.busy, l.due, l.missed = true, due, l.missed[:0]
		return true
	}
	if n := len(l.missed); n > 0 {
		if r := &l.missed[n-1]; r.first.Add(period * time.Duration(r.n)).Equal(due) {
			r.n++
			return false
		}
	}
	l.missed = append(l.missed, missedRun{first: due, n: 1})
	return false
}

// begin notes that the running call's goroutine began at now, and returns the turn lag: how
// late after its turn the generator got to it (its timer, a call slot, the scheduler). That
// part of the wait is the runner's, not the server's: release leaves it out of the call's own
// corrected sample, and the fleet records it in turn_lag (package generator).
func (l *loopTurns) begin(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.began = now
	return max(0, now.Sub(l.due))
}

// release ends the running call. answered is when it got its result, zero if it got none (a
// failure, or the run ended); when it got one, record gets the corrected latency of the call
// (from its turn, or from when the generator got to it if that was later: begin) and of every
// turn missed while it ran (from that turn), as the application behind each turn would have
// waited until then. lag is the dispatch lag of the call's exchanges (clients/wire): the
// generator's own part of its wait, which every sample leaves out (it delayed the missed
// turns' answer as much as the call's), none below zero.
func (l *loopTurns) release(answered time.Time, lag, period time.Duration, record func(time.Duration)) {
	l.mu.Lock()
	due, missed := l.due, append([]missedRun(nil), l.missed...)
	if l.began.After(due) { // the call's own sample starts when the generator got to it
		due = l.began
	}
	l.busy, l.missed, l.began = false, l.missed[:0], time.Time{}
	l.mu.Unlock()
	if answered.IsZero() {
		return
	}
	record(max(0, answered.Sub(due)-lag))
	for _, r := range missed {
		for i := range r.n {
			record(max(0, answered.Sub(r.first.Add(period*time.Duration(i)))-lag))
		}
	}
}

// turnCall is what one call learns for its loop's turn: when it got its result, the dispatch
// lag of its exchanges; and the phase its turn fell in.
type turnCall struct {
	answered time.Time
	lag      wire.DispatchLag
	phase    int
}

type turnKey struct{}

// withTurnCall gives a call's context the record of its result's time and of its exchanges'
// dispatch lag.
func withTurnCall(ctx context.Context, t *turnCall) context.Context {
	return wire.WithDispatchLag(context.WithValue(ctx, turnKey{}, t), &t.lag)
}

// noteAnswered marks, on the call's turn, that the call got its result at now.
func noteAnswered(ctx context.Context, now time.Time) {
	if t, ok := ctx.Value(turnKey{}).(*turnCall); ok {
		t.answered = now
	}
}
