package clients

import (
	"sync"
	"time"
)

// Truth tells when a session died, as far as the run can know: exactly for the reference
// server (it records each death), estimated for others.
type Truth interface {
	DeadSince(sessionID string) (at time.Time, dead bool)
}

// TruthFunc adapts a function to Truth.
type TruthFunc func(string) (time.Time, bool)

func (f TruthFunc) DeadSince(id string) (time.Time, bool) { return f(id) }

// toucher is a Truth that learns from the client's own traffic.
type toucher interface {
	touch(id string, at time.Time)
}

// Estimated is the Truth for a server that cannot tell: it assumes the server's declared
// sliding TTL runs from the last session-scoped POST that the server answered with a success,
// which is how the official Go SDK server (and the reference server) count idleness. Its
// figures are estimates and the export says so.
type Estimated struct {
	TTL time.Duration

	mu   sync.Mutex
	last map[string]time.Time
}

// NewEstimated returns an Estimated truth for a declared TTL.
func NewEstimated(ttl time.Duration) *Estimated {
	return &Estimated{TTL: ttl, last: make(map[string]time.Time)}
}

func (e *Estimated) touch(id string, at time.Time) {
	e.mu.Lock()
	if at.After(e.last[id]) {
		e.last[id] = at
	}
	e.mu.Unlock()
}

func (e *Estimated) DeadSince(id string) (time.Time, bool) {
	e.mu.Lock()
	last, ok := e.last[id]
	e.mu.Unlock()
	if !ok || e.TTL <= 0 {
		return time.Time{}, false
	}
	d := last.Add(e.TTL)
	return d, !time.Now().Before(d)
}
