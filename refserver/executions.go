package refserver

import (
	"strings"
	"sync"
)

// executions counts the tool calls the server ran per logical call (mcpwire.CallKey in the
// call's _meta, "GROUP/CLIENT/SEQ"): a call run again, after a retry or a re-issue of a call
// whose answer a fault cut, is a fact the run reports (calls_run_twice), not a guess. A
// cluster's replicas share one. It remembers at most maxCallKeys keys; past that it stops
// learning new ones (and says so), so its memory stays bounded on a long run.
type executions struct {
	mu   sync.Mutex
	seen map[string]struct{}
	dups map[string]int64 // by group: the key's part before its first '/'
	full bool
}

const maxCallKeys = 1 << 18

func newExecutions() *executions {
	return &executions{seen: map[string]struct{}{}, dups: map[string]int64{}}
}

// ran notes one execution of the call named key ("" when the client named none).
func (e *executions) ran(key string) {
	if key == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.seen[key]; ok {
		group, _, _ := strings.Cut(key, "/")
		e.dups[group]++
		return
	}
	if len(e.seen) >= maxCallKeys {
		e.full = true
		return
	}
	e.seen[key] = struct{}{}
}

// RunTwice is what the server knows of calls it ran more than once.
type RunTwice struct {
	ByGroup map[string]int64 // executions beyond the first, by the key's group
	// Partial says the server stopped learning new calls (it had maxCallKeys): later
	// duplicates of calls it never learnt went uncounted.
	Partial bool
}

func (e *executions) runTwice() RunTwice {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := RunTwice{ByGroup: make(map[string]int64, len(e.dups)), Partial: e.full}
	for g, n := range e.dups {
		out.ByGroup[g] = n
	}
	return out
}
