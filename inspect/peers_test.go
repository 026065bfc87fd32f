package inspect

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// peerTTL is the session TTL of the real SDK servers and of the stability runs: long enough
// that inspect's steps on a session fit in it on a loaded machine.
const peerTTL = time.Second

func inspectURL(t *testing.T, u *url.URL, ttl time.Duration) *Fingerprint {
	t.Helper()
	fp, err := inspectOnce(u, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func inspectOnce(u *url.URL, ttl time.Duration) (*Fingerprint, error) {
	return Inspect(context.Background(), Options{Conn: wire.Conn{URL: u}, TTL: ttl, Idle: 500 * time.Millisecond, Timeout: 5 * time.Second})
}

func peerURL(t *testing.T, start func(testing.TB, peers.Options) *peers.Server) (*url.URL, *peers.Server) {
	t.Helper()
	return peerAt(t, start, peerTTL)
}

// Real SDK servers (internal/peers), as a user would meet them. inspect names replay_lies on
// the one whose event log outlives its sessions (mcp-go with a retained store) and on no other;
// it gets its cursor there from a tool call sent with a progress token (mcp-go answers ping with
// JSON, and its GET stream is silent), and it answers the server's requests.
func TestPeerFingerprints(t *testing.T) {
	const progressCall = "a tools/call report_progress reply, sent with a progress token"
	tests := []struct {
		name  string
		start func(testing.TB, peers.Options) *peers.Server
		want  facts
	}{
		{"go-sdk", peers.GoSDK, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "no", Cross: "no", Silent: "no",
			Post: "404", Get: "404", GetCursor: "404", Missing: "200", DupGet: "409",
			Holds: "no", Via: "a ping reply", Probe: "ping", Dead: []int{404},
			Hazards: []string{"stream_does_not_hold_session", "no_keepalive", "missing_session_served"}}},
		{"mcp-go", peers.MCPGo, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "no", Replay: "no", Cross: "no", Silent: "no",
			Post: "404", Get: "200", GetCursor: "400", Missing: "404", DupGet: "200",
			Holds: "no", Via: progressCall, Probe: "ping", Dead: []int{400, 404},
			Hazards: []string{"permissive_get", "stream_does_not_hold_session", "no_keepalive"}}},
		{"mcp-go with a retained event log", peers.MCPGoRetained, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "no", Replay: "yes", Cross: "no", Silent: "no",
			Post: "404", Get: "200", GetCursor: "200", Missing: "404", DupGet: "200",
			Holds: "no", Via: progressCall, Probe: "ping", Dead: []int{404},
			Hazards: []string{"replay_lies", "permissive_get", "stream_does_not_hold_session", "no_keepalive"}}},
		{"ts-sdk", peers.TS, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "no", Cross: "no", Silent: "no",
			Post: "404", Get: "404", GetCursor: "404", Missing: "400", DupGet: "409",
			Holds: "no", Via: "a ping reply", Probe: "ping", Dead: []int{404},
			Hazards: []string{"stream_does_not_hold_session", "no_keepalive"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, srv := peerURL(t, tt.start)
			fp := inspectURL(t, u, peerTTL)
			checkFacts(t, fp, tt.want)
			if st := srv.Stats(); st.Unanswered != 0 {
				t.Errorf("the server counts %d of its %d requests unanswered", st.Unanswered, st.ServerRequests)
			}
		})
	}
}

func checkFacts(t *testing.T, fp *Fingerprint, want facts) {
	t.Helper()
	if got := factsOf(fp); !sameFacts(got, want) {
		var table strings.Builder
		WriteTable(&table, fp)
		t.Errorf("fingerprint\n got %+v\nwant %+v\n%s", got, want, table.String())
	}
}

func sameFacts(a, b facts) bool {
	return a.Generation == b.Generation && a.Protocol == b.Protocol && a.SessionIDs == b.SessionIDs &&
		a.GetValidates == b.GetValidates && a.Replay == b.Replay && a.Cross == b.Cross && a.Silent == b.Silent &&
		a.Post == b.Post && a.Get == b.Get && a.GetCursor == b.GetCursor && a.Missing == b.Missing && a.DupGet == b.DupGet &&
		a.Holds == b.Holds && a.Keepalive == b.Keepalive && a.Via == b.Via && a.Probe == b.Probe &&
		slices.Equal(a.Dead, b.Dead) && slices.Equal(a.Hazards, b.Hazards)
}

// The same server gives the same fingerprint 10 times out of 10, even inspected 10 times at
// once: on every server that has the trap (the reference server in the seed's regime, mcp-go
// with a retained log) replay_lies is named each time, and against a store shared by all
// sessions that sorts its ids as strings (the TypeScript SDK's example store, where a result of
// the same millisecond may sort before the cursor) cross_session_replay is named each time.
func TestFingerprintIsStable(t *testing.T) {
	const runs = 10
	tests := []struct {
		name   string
		server func(t *testing.T) *url.URL
		hazard string
	}{
		{"reference server, permissive, long retention", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: peerTTL, Retention: time.Minute})
		}, "replay_lies"},
		{"mcp-go with a retained event log", func(t *testing.T) *url.URL {
			u, _ := peerURL(t, peers.MCPGoRetained)
			return u
		}, "replay_lies"},
		{"a string-sorted event store shared by all sessions", func(t *testing.T) *url.URL {
			u, _ := peerURL(t, peers.MCPGoSortedStore)
			return u
		}, "cross_session_replay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.server(t)
			got := make([]*Fingerprint, runs)
			var wg sync.WaitGroup
			for i := range runs {
				wg.Go(func() {
					var err error
					if got[i], err = inspectOnce(u, peerTTL); err != nil {
						t.Errorf("run %d: %v", i+1, err)
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			var table strings.Builder
			WriteTable(&table, got[0])
			t.Logf("run 1 of %d:\n%s", runs, table.String())
			first := factsOf(got[0])
			if !slices.Contains(first.Hazards, tt.hazard) {
				checkFacts(t, got[0], facts{Hazards: []string{tt.hazard, "..."}})
			}
			for i, fp := range got[1:] {
				if f := factsOf(fp); !sameFacts(f, first) {
					var table strings.Builder
					WriteTable(&table, fp)
					t.Errorf("run %d differs from run 1:\n%+v\n%+v\n%s", i+2, f, first, table.String())
				}
			}
		})
	}
}

// A tool call sent with a progress token streams its notifications, and the server requests the
// Go SDK and TypeScript SDK servers send in the middle of it (ping) are answered: the servers
// count none unanswered.
func TestToolCallAnswersServerRequests(t *testing.T) {
	for _, start := range []func(testing.TB, peers.Options) *peers.Server{peers.GoSDK, peers.TS} {
		u, srv := peerURL(t, start)
		t.Run(srv.Name, func(t *testing.T) {
			in, err := newInspector(Options{Conn: wire.Conn{URL: u}, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			s, err := in.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var picked []toolInfo
			for _, tool := range in.toolList(ctx, s) {
				if tool.Name == "report_progress" {
					picked = append(picked, tool)
				}
			}
			if len(picked) != 1 {
				t.Fatalf("report_progress not among the tools picked: %v", in.toolList(ctx, s))
			}
			r := in.exchange(ctx, s, in.nextID(), "tools/call", map[string]any{"name": "report_progress",
				"arguments": in.toolArgs(picked[0]), "_meta": map[string]any{"progressToken": "t-1"}})
			if r == nil || !r.served() || len(r.ids) < 2 || strings.Contains(string(r.result), `"isError":true`) {
				t.Fatalf("tools/call report_progress got %+v; violations %v", r, in.fp.ProtocolViolations)
			}
			st := srv.Stats()
			if in.fp.ServerRequests["ping"] < 1 || st.ServerRequests < 1 || st.Unanswered != 0 {
				t.Errorf("inspect answered %v; the server sent %d requests, %d unanswered", in.fp.ServerRequests, st.ServerRequests, st.Unanswered)
			}
		})
	}
}
