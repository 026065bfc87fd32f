package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// facts is the part of a fingerprint a test pins down: what the server does, not how long it
// took to show it.
type facts struct {
	Generation, Protocol                  string
	SessionIDs                            bool
	GetValidates, Replay, Cross, Silent   string // "yes", "no", "unknown"
	Post, Get, GetCursor, Missing, DupGet string // a status or "-"
	Holds                                 string
	Keepalive                             bool
	Via                                   string // how the cursor came
	Probe                                 string
	Dead                                  []int
	Hazards                               []string
}

func factsOf(fp *Fingerprint) facts {
	f := facts{
		Generation: fp.Generation, Protocol: fp.NegotiatedProtocol, SessionIDs: fp.SessionIDs,
		GetValidates: boolText(fp.GetValidatesSession), Replay: boolText(fp.ReplayAfterDeath),
		Cross: boolText(fp.CrossSessionReplay), Silent: boolText(fp.SilentSubstitution),
		Post: intText(fp.DeadStatus.Post), Get: intText(fp.DeadStatus.Get), GetCursor: intText(fp.DeadStatus.GetWithCursor),
		Missing: intText(fp.MissingSessionStatus), DupGet: intText(fp.DuplicateGetStatus),
		Holds: boolText(fp.OpenStreamHoldsSession), Keepalive: fp.StreamKeepaliveMS != nil,
		Via: fp.CursorVia, Probe: fp.Verdict.Probe, Dead: fp.Verdict.DeadStatuses,
	}
	for _, h := range fp.Verdict.Hazards {
		f.Hazards = append(f.Hazards, h.Name)
	}
	return f
}

const ttl = 400 * time.Millisecond

// Each server's fingerprint, as it really behaves (checked by hand against its source and
// on the wire): the reference server in the seed's regime and a strict one, the official Go
// SDK in each of its modes, and mcp-go, an independent implementation.
func TestFingerprints(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T) *url.URL
		want   facts
	}{
		{"reference server, the seed's regime", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: ttl, Retention: time.Minute, NotifyInterval: 100 * time.Millisecond})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "yes", Cross: "no", Silent: "no",
			Post: "404", Get: "404", GetCursor: "200", Missing: "400", DupGet: "409",
			Holds: "no", Keepalive: true, Via: "a ping reply", Probe: "ping", Dead: []int{404},
			Hazards: []string{"replay_lies", "stream_does_not_hold_session"}}},
		{"reference server, the seed's regime, unknown cursors answered 200 with nothing: cross-session unknown", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: ttl, Retention: time.Minute, NotifyInterval: 100 * time.Millisecond, UnknownCursorStatus: -1})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "yes", Cross: "unknown", Silent: "no",
			Post: "404", Get: "404", GetCursor: "200", Missing: "400", DupGet: "409",
			Holds: "no", Keepalive: true, Via: "a ping reply", Probe: "ping", Dead: []int{404},
			Hazards: []string{"replay_lies", "stream_does_not_hold_session"}}},
		{"reference server, the seed's regime, JSON replies: the cursor comes from the GET stream", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: ttl, Retention: time.Minute, NotifyInterval: 50 * time.Millisecond, PostResponse: refserver.PostJSON})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "yes", Cross: "no", Silent: "no",
			Post: "404", Get: "404", GetCursor: "200", Missing: "400", DupGet: "409",
			Holds: "no", Keepalive: true, Via: "the GET stream", Probe: "ping", Dead: []int{404},
			Hazards: []string{"replay_lies", "stream_does_not_hold_session"}}},
		{"reference server, strict GET, dead status 400, keepalives", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: ttl, GetValidation: refserver.Strict, DeadStatus: 400, Keepalive: 100 * time.Millisecond})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "no", Cross: "no", Silent: "no",
			Post: "400", Get: "400", GetCursor: "400", Missing: "400", DupGet: "409",
			Holds: "no", Keepalive: true, Via: "a ping reply", Probe: "ping", Dead: []int{400},
			Hazards: []string{"stream_does_not_hold_session", "nonstandard_dead_status"}}},
		{"Go SDK, stateful, SessionTimeout, event store", func(t *testing.T) *url.URL {
			return sdkServer(t, &mcp.StreamableHTTPOptions{SessionTimeout: ttl, EventStore: mcp.NewMemoryEventStore(nil)})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "no", Cross: "no", Silent: "no",
			Post: "404", Get: "404", GetCursor: "404", Missing: "200", DupGet: "409",
			Holds: "no", Via: "a ping reply", Probe: "ping", Dead: []int{404},
			Hazards: []string{"stream_does_not_hold_session", "no_keepalive", "missing_session_served"}}},
		{"Go SDK, stateful, no event store", func(t *testing.T) *url.URL {
			return sdkServer(t, &mcp.StreamableHTTPOptions{SessionTimeout: ttl})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "unknown", Cross: "unknown", Silent: "no",
			Post: "404", Get: "404", GetCursor: "-", Missing: "200", DupGet: "409",
			Holds: "no", Probe: "ping", Dead: []int{404},
			Hazards: []string{"stream_does_not_hold_session", "no_keepalive", "missing_session_served"}}},
		{"Go SDK, JSONResponse", func(t *testing.T) *url.URL {
			return sdkServer(t, &mcp.StreamableHTTPOptions{SessionTimeout: ttl, JSONResponse: true})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "yes", Replay: "unknown", Cross: "unknown", Silent: "no",
			Post: "404", Get: "404", GetCursor: "-", Missing: "200", DupGet: "409",
			Holds: "no", Probe: "ping", Dead: []int{404},
			Hazards: []string{"stream_does_not_hold_session", "no_keepalive", "missing_session_served"}}},
		{"Go SDK, stateless, both generations", func(t *testing.T) *url.URL {
			return sdkServer(t, &mcp.StreamableHTTPOptions{Stateless: true})
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: false,
			GetValidates: "unknown", Replay: "unknown", Cross: "unknown", Silent: "unknown",
			Post: "-", Get: "-", GetCursor: "-", Missing: "200", DupGet: "-", Holds: "unknown",
			Dead: []int{404}, Hazards: []string{"no_sessions"}}},
		{"Go SDK, stateless revision only", func(t *testing.T) *url.URL {
			return sdkServer(t, &mcp.StreamableHTTPOptions{Stateless: true}, "2026-07-28")
		}, facts{Generation: "stateless", Protocol: "2026-07-28",
			GetValidates: "unknown", Replay: "unknown", Cross: "unknown", Silent: "unknown",
			Post: "-", Get: "-", GetCursor: "-", Missing: "-", DupGet: "-", Holds: "unknown",
			Hazards: []string{"stateless"}}},
		{"mcp-go, heartbeats, idle sweeper", func(t *testing.T) *url.URL {
			u, _ := peerAt(t, peers.MCPGoHeartbeat, ttl)
			return u
		}, facts{Generation: "session", Protocol: "2025-11-25", SessionIDs: true,
			GetValidates: "no", Replay: "unknown", Cross: "unknown", Silent: "yes",
			Post: "200", Get: "200", GetCursor: "-", Missing: "404", DupGet: "200",
			Holds: "unknown", Keepalive: true, Dead: []int{404},
			Hazards: []string{"permissive_get", "silent_substitution", "no_valid_probe"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.server(t)
			// A server that sends keepalives every 100 ms is watched until two came (5 s at
			// most): on a loaded machine none may reach the reader within 500 ms. One that
			// sends none is watched 500 ms: a stall cannot make one appear.
			idle := 500 * time.Millisecond
			if tt.want.Keepalive {
				idle = 5 * time.Second
			}
			fp, err := Inspect(context.Background(), Options{Conn: wire.Conn{URL: u}, TTL: ttl, Idle: idle, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got := factsOf(fp)
			if tt.want.Keepalive && !got.Keepalive && fp.KeepaliveSessionsDied == watchTries && fp.KeepaliveWatchedMS == 0 {
				// Every watched session died of the TTL though pinged (a starved machine): the
				// keepalive is unknown, and said so, never called absent (no no_keepalive).
				t.Logf("keepalive inconclusive: %s", keepaliveText(fp))
				got.Keepalive = true
			}
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				var table bytes.Buffer
				WriteTable(&table, fp)
				t.Errorf("fingerprint\n got %+v\nwant %+v\n%s", got, tt.want, table.String())
			}
			// The JSON export has the fields, by name.
			data, _ := json.Marshal(fp)
			var m map[string]any
			json.Unmarshal(data, &m)
			for _, k := range []string{"negotiated_protocol", "get_validates_session", "dead_status", "replay_after_death",
				"cross_session_replay", "silent_substitution", "probe_methods", "open_stream_holds_session",
				"stream_keepalive_ms", "missing_session_status", "duplicate_get_status", "verdict"} {
				if _, ok := m[k]; !ok {
					t.Errorf("JSON lacks %q", k)
				}
			}
			ds, _ := m["dead_status"].(map[string]any)
			for _, k := range []string{"post", "get", "get_with_cursor", "delete"} {
				if _, ok := ds[k]; !ok {
					t.Errorf("JSON dead_status lacks %q", k)
				}
			}
		})
	}
}

// Without a TTL inspect still answers what it can, and says what it did not measure.
func TestInspectWithoutTTL(t *testing.T) {
	u := referenceServer(t, refserver.Config{SessionTTL: time.Minute, Retention: time.Hour, NotifyInterval: 50 * time.Millisecond})
	fp, err := Inspect(context.Background(), Options{Conn: wire.Conn{URL: u}, Idle: 300 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !isTrue(fp.ReplayAfterDeath) || fp.OpenStreamHoldsSession != nil || fp.AfterTTL != nil {
		t.Errorf("replay after death %s, holds %s, after_ttl %+v", boolText(fp.ReplayAfterDeath), boolText(fp.OpenStreamHoldsSession), fp.AfterTTL)
	}
	if !slices.ContainsFunc(fp.Notes, func(n string) bool { return strings.Contains(n, "no --ttl given") }) {
		t.Errorf("notes %q do not say the TTL facts were not measured", fp.Notes)
	}
}

// A server that cannot be reached, or that is not an MCP server, cannot be inspected: the
// error says so; nothing hangs.
func TestInspectFailures(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	notMCP := serve(t, nil, "/mcp") // the default mux: 404 for everything
	htmlPage := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Sign in</body></html>")
	}), "/mcp")
	for _, tc := range []struct {
		name, url, want string
	}{
		{"nothing listening", "http://" + closed + "/mcp", "connection refused"},
		{"not an MCP server", notMCP.String(), "initialize: HTTP 404"},
		{"a web page", htmlPage.String(), "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(tc.url)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := Inspect(ctx, Options{Conn: wire.Conn{URL: u}, Idle: 100 * time.Millisecond, Timeout: time.Second})
			var ue *UnreachableError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an UnreachableError about %q", err, tc.want)
			}
		})
	}
}
