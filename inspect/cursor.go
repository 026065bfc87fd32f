package inspect

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpchaos/mcpchaos/clients"
)

// trail is the event ids of one stream of a session, in arrival order: cursors, and what
// followed each. via says how it was obtained.
type trail struct {
	via string
	ids []string
}

// after returns the ids that followed cursor c.
func (t *trail) after(c string) []string {
	if t == nil {
		return nil
	}
	i := slices.Index(t.ids, c)
	if i < 0 {
		return nil
	}
	return t.ids[i+1:]
}

// sortable says whether some id that followed c also sorts after it as a string: a store that
// orders ids as strings (the TypeScript SDK's in-memory one) replays only those, so a cursor
// without one can look like "nothing to replay".
func (t *trail) sortable(c string) bool {
	return slices.ContainsFunc(t.after(c), func(id string) bool { return id > c })
}

// cursors returns up to n cursors to try, best first: cursors with a follower, the sortable
// ones first, earliest first (the most followers); a lone id when that is all there is.
func (t *trail) cursors(n int) []string {
	if t == nil || len(t.ids) == 0 {
		return nil
	}
	if len(t.ids) == 1 {
		return t.ids
	}
	c := slices.Clone(t.ids[:len(t.ids)-1])
	slices.SortStableFunc(c, func(a, b string) int {
		switch sa, sb := t.sortable(a), t.sortable(b); {
		case sa && !sb:
			return -1
		case sb && !sa:
			return 1
		}
		return 0
	})
	return c[:min(n, len(c))]
}

// good says the trail has a cursor whose replay any event store would deliver.
func (t *trail) good() bool { return t != nil && slices.ContainsFunc(t.ids, t.sortable) }

// source is one way a server may put event ids in a session's hands.
type source struct {
	name string
	get  func(ctx context.Context, s *clients.Session) []string
}

// attemptsPerSource is how often a source that gave ids, but none sortable, is tried again:
// ids minted in one millisecond may sort in any order (see trail.sortable).
const attemptsPerSource = 3

// acquire finds a trail of s by every means a server offers, in order of cost: the priming
// event and ids of a ping reply, of logging/setLevel's, of tool calls sent with a progress token
// (the likeliest to stream notifications first), and the standalone GET stream. It stops at the
// first good trail; otherwise it returns the longest it saw, or nil.
func (in *inspector) acquire(ctx context.Context, s *clients.Session) *trail {
	var best *trail
	for _, src := range in.sources(ctx, s) {
		for range attemptsPerSource {
			ids := src.get(ctx, s)
			if len(ids) == 0 {
				break
			}
			t := &trail{via: src.name, ids: ids}
			if t.good() {
				return t
			}
			if best == nil || len(t.ids) > len(best.ids) {
				best = t
			}
		}
	}
	return best
}

func (in *inspector) sources(ctx context.Context, s *clients.Session) []source {
	post := func(method string, params func() any) func(context.Context, *clients.Session) []string {
		return func(ctx context.Context, s *clients.Session) []string {
			rctx, cancel := context.WithTimeout(ctx, in.callWait())
			defer cancel()
			if r := in.exchange(rctx, s, in.nextID(), method, params()); r != nil {
				return r.ids
			}
			return nil
		}
	}
	none := func() any { return nil }
	out := []source{
		{"a ping reply", post("ping", none)},
		{"a logging/setLevel reply", post("logging/setLevel", func() any { return map[string]any{"level": "debug"} })},
	}
	for _, t := range in.toolList(ctx, s) {
		params := func() any {
			return map[string]any{"name": t.Name, "arguments": in.toolArgs(t),
				"_meta": map[string]any{"progressToken": fmt.Sprintf("mcpchaos-inspect-%d", in.nextID())}}
		}
		out = append(out, source{fmt.Sprintf("a tools/call %s reply, sent with a progress token", t.Name), post("tools/call", params)})
	}
	out = append(out, source{"the GET stream", func(ctx context.Context, s *clients.Session) []string {
		rs := in.openStream(ctx, s, "")
		if !rs.stream() {
			return nil
		}
		return rs.ids(3, in.shortWait())
	}})
	return out
}

// toolList lists the server's tools once (on the first session that asks) and picks those
// to call.
func (in *inspector) toolList(ctx context.Context, s *clients.Session) []toolInfo {
	if in.tools != nil {
		return *in.tools
	}
	in.tools = new([]toolInfo)
	rctx, cancel := context.WithTimeout(ctx, in.o.Timeout)
	defer cancel()
	r := in.exchange(rctx, s, in.nextID(), "tools/list", nil)
	if r == nil || !r.served() {
		return nil
	}
	*in.tools = pickTools(r.result, in.o.Tool)
	if in.o.Tool != "" && len(*in.tools) == 0 {
		in.note("the server lists no tool named %q: no tool was called", in.o.Tool)
	}
	return *in.tools
}

func (in *inspector) toolArgs(t toolInfo) any {
	if in.o.Tool == t.Name && in.o.ToolArgs != nil {
		return in.o.ToolArgs
	}
	return minimalArgs(t.InputSchema)
}

// callWait bounds a request sent for its event ids: a slow tool's ids come before its result,
// and with a short declared TTL the session must outlive the wait.
func (in *inspector) callWait() time.Duration {
	w := min(in.o.Timeout, 2*time.Second)
	if in.o.TTL > 0 {
		w = min(w, in.o.TTL/2)
	}
	return w
}
