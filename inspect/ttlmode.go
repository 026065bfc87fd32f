package inspect

import (
	"context"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// activeWatch keeps one session busy through the TTL wait (a ping every quarter of the TTL),
// to tell a sliding TTL (activity keeps the session) from an absolute one (a gateway ends it a
// TTL after initialize however active it is).
type activeWatch struct {
	s    *wire.Session
	stop context.CancelFunc
	done sync.WaitGroup

	mu       sync.Mutex
	refused  *int          // the first non-2xx status a ping got
	at       time.Duration // since initialize, when it came
	served   bool          // a ping was served after the TTL had passed
	answered bool          // any ping got an answer that was not garbage
}

// startActive opens the busy session and pings it until stopActive; nil when it could not open.
func (in *inspector) startActive(ctx context.Context) *activeWatch {
	s, err := in.open(ctx)
	if err != nil {
		in.note("could not open the session to keep busy: ttl_mode is unknown")
		return nil
	}
	born := time.Now()
	actx, cancel := context.WithCancel(ctx)
	a := &activeWatch{s: s, stop: cancel}
	a.done.Go(func() {
		tick := time.NewTicker(max(in.o.TTL/4, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-tick.C:
			}
			st, served := in.ping(actx, s)
			if actx.Err() != nil || st == nil {
				return
			}
			a.mu.Lock()
			a.answered = a.answered || served != nil
			if isTrue(served) && time.Since(born) > in.o.TTL {
				a.served = true
			}
			if *st/100 != 2 && a.refused == nil {
				a.refused, a.at = st, time.Since(born)
			}
			stop := a.refused != nil
			a.mu.Unlock()
			if stop {
				return
			}
		}
	})
	return a
}

// ttlMode ends the watch and says how the TTL counts: "absolute" when the busy session was
// refused at or after the declared TTL, "sliding" when it was served past it, "" when the
// answers cannot tell (the server serves any id, it was refused before the TTL, or nothing
// came).
func (in *inspector) ttlMode(a *activeWatch) string {
	if a == nil {
		return ""
	}
	a.stop()
	a.done.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case isTrue(in.fp.SilentSubstitution):
		in.note("the server serves any id, so whether activity keeps a session past its TTL cannot be seen: ttl_mode is unknown")
		return ""
	case a.refused != nil && a.at >= in.o.TTL:
		in.note("a session pinged every %s was refused (%d) %s after initialize, at the declared TTL (%s) however active: the TTL is absolute (ttl_mode: absolute)", in.o.TTL/4, *a.refused, a.at.Round(time.Millisecond), in.o.TTL)
		return "absolute"
	case a.refused != nil:
		in.note("a session pinged every %s was refused (%d) %s after initialize, before the declared TTL (%s): ttl_mode is unknown", in.o.TTL/4, *a.refused, a.at.Round(time.Millisecond), in.o.TTL)
		return ""
	case a.served:
		return "sliding"
	}
	return ""
}
