package inspect

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// trail is the event ids of one stream of a session, in arrival order: cursors, and what
// followed each. via says how it was obtained.
type trail struct {
	via string
	ids []string
}

// others returns the trail's ids other than cursor c: what a replay from c may deliver. It is a
// set, not what followed c in arrival order, because stores disagree on order: mcp-go's and the
// reference server's replay in insertion order, the TypeScript SDK's example store sorts ids
// as strings (an event of the same millisecond can sort before the cursor).
func (t *trail) others(c string) []string {
	if t == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(t.ids), func(id string) bool { return id == c })
}

// cursors returns up to n cursors to try, so that a replay from one of them delivers events of
// the trail under either order: the first id to arrive (insertion order), the least as a
// string (string order), then the others that arrived before the last; a lone id when that is
// all there is.
func (t *trail) cursors(n int) []string {
	if t == nil || len(t.ids) == 0 {
		return nil
	}
	var out []string
	for _, c := range append([]string{t.ids[0], slices.Min(t.ids)}, t.ids[1:max(len(t.ids)-1, 1)]...) { // one id: none between
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out[:min(n, len(out))]
}

// source is one way a server may put event ids in a session's hands. get tries it once,
// within wait; cut says the answer was still coming when the wait ended (inconclusive).
type source struct {
	name string
	get  func(ctx context.Context, s *wire.Session, wait time.Duration) (ids []string, cut bool)
}

// triesPerSource bounds the tries of a source whose answer did not come within its wait: on a
// loaded machine (or a loaded staging server) a reply that is merely slow must not read as a
// server that offers no cursor, which would turn replay_lies into "unknown" one run in ten.
const triesPerSource = 3

// acquire finds a trail of s by every means a server offers, in order of cost: the priming
// event and ids of a ping reply, of logging/setLevel's, of tool calls sent with a progress token
// (the likeliest to stream notifications first), and the standalone GET stream. It stops at the
// first trail of two ids or more (a cursor and an event to recognise in a replay); otherwise it
// returns a lone id, or nil.
func (in *inspector) acquire(ctx context.Context, s *wire.Session) *trail {
	var best *trail
	for _, src := range in.sources(ctx, s) {
		ids := in.try(ctx, s, src)
		switch {
		case len(ids) >= 2:
			return &trail{via: src.name, ids: ids}
		case len(ids) == 1 && best == nil:
			best = &trail{via: src.name, ids: ids}
		}
	}
	return best
}

// try gets src's ids, trying again with twice the wait (up to the request timeout) while its
// answer is cut by the wait, and keeps the longest trail seen. Each try is a request of its
// own, so the session stays active meanwhile. A source still cut after triesPerSource tries is
// noted: its silence is the server's slowness, not its regime.
func (in *inspector) try(ctx context.Context, s *wire.Session, src source) []string {
	var best []string
	var waited time.Duration
	for i := range triesPerSource {
		wait := max(min(in.callWait()<<i, in.o.Timeout), in.callWait())
		ids, cut := src.get(ctx, s, wait)
		if len(ids) > len(best) {
			best = ids
		}
		if !cut || len(best) >= 2 || ctx.Err() != nil {
			return best
		}
		waited += wait
	}
	in.note("%s: no complete answer in %d tries (%s in all): its event ids are unknown", src.name, triesPerSource, waited)
	return best
}

func (in *inspector) sources(ctx context.Context, s *wire.Session) []source {
	post := func(method string, params func() any) func(context.Context, *wire.Session, time.Duration) ([]string, bool) {
		return func(ctx context.Context, s *wire.Session, wait time.Duration) ([]string, bool) {
			rctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			r := in.exchange(rctx, s, in.nextID(), method, params())
			switch {
			case r != nil:
				return r.ids, r.cut()
			default: // no status: cut by the wait when it ended, else a transport failure (noted)
				return nil, rctx.Err() != nil && ctx.Err() == nil
			}
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
	// An idle GET stream that stays silent is the usual case, not a slow answer: never cut.
	out = append(out, source{"the GET stream", func(ctx context.Context, s *wire.Session, _ time.Duration) ([]string, bool) {
		rs := in.openStream(ctx, s, "")
		if !rs.stream() {
			return nil, false
		}
		return rs.ids(3, in.shortWait()), false
	}})
	return out
}

// toolList lists the server's tools once (on the first session that asks) and picks those
// to call.
func (in *inspector) toolList(ctx context.Context, s *wire.Session) []toolInfo {
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
	return fleet.MinimalInstance(t.InputSchema) // unchecked: the server's refusal says why
}

// callWait is the first wait for a request sent for its event ids: a slow tool's ids come
// before its result, and with a short declared TTL the session must outlive the wait. A try
// cut by it is tried again with a longer one (try): each try is activity of its own.
func (in *inspector) callWait() time.Duration {
	w := min(in.o.Timeout, 2*time.Second)
	if in.o.TTL > 0 {
		w = min(w, in.o.TTL/2)
	}
	return w
}
