package inspect

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// inspect lists every protocol era a server speaks and which it prefers, whichever it was
// asked to inspect in, and --protocol 2026-07-28 inspects the stateless revision where the
// server offers it, and says so where it does not. Real servers: mcp-go (both eras, its
// default id mode), the Go SDK's stateless server (both), the TypeScript SDK (the session
// family only: no server/discover).
func TestInspectErasAndProtocol(t *testing.T) {
	both := []string{"session", "stateless"}
	for _, tc := range []struct {
		name  string
		start func(testing.TB, peers.Options) *peers.Server
		eras  []string
		pref  string
	}{
		{"mcp-go default id mode", peers.MCPGoIDs, both, wire.ProtocolStateless},
		{"go-sdk stateless", peers.GoSDKStateless, both, wire.ProtocolStateless},
		{"ts-sdk", peers.TS, []string{"session"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := peerURL(t, tc.start)
			fp := inspectURL(t, u, 0)
			if !slices.Equal(fp.Eras, tc.eras) || fp.PreferredProtocol != tc.pref {
				t.Errorf("eras %v preferring %q, want %v preferring %q (server/discover named %v)", fp.Eras, fp.PreferredProtocol, tc.eras, tc.pref, fp.SupportedVersions)
			}
			var table bytes.Buffer
			if err := WriteTable(&table, fp); err != nil {
				t.Fatal(err)
			}
			want := "protocol eras"
			if len(tc.eras) == 2 {
				want = "and stateless (2026-07-28); prefers " + tc.pref
			}
			if !strings.Contains(table.String(), want) {
				t.Errorf("the table does not say %q:\n%s", want, table.String())
			}

			sfp, err := Inspect(context.Background(), Options{Conn: wire.Conn{URL: u}, Protocol: wire.ProtocolStateless, Idle: 500 * time.Millisecond, Timeout: 5 * time.Second})
			if len(tc.eras) == 1 {
				var ue *UnreachableError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), "does not speak the stateless revision") {
					t.Fatalf("--protocol 2026-07-28 on a session-only server: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sfp.Generation != "stateless" || sfp.NegotiatedProtocol != wire.ProtocolStateless || !slices.Equal(sfp.Eras, both) {
				t.Errorf("--protocol 2026-07-28: generation %q protocol %q eras %v", sfp.Generation, sfp.NegotiatedProtocol, sfp.Eras)
			}
		})
	}
}

// On mcp-go's default id mode (any id served), inspect's words match what the server
// answered: a session past the TTL was served as was one killed by DELETE, so its expiry is
// unknown, not "no"; the only refusal is the event store's to a dead cursor, said as such.
func TestInspectServesAnyIDWording(t *testing.T) {
	u, _ := peerAt(t, peers.MCPGoIDsStore, peerTTL)
	fp := inspectURL(t, u, peerTTL)
	if fp.AfterTTL == nil || fp.AfterTTL.Expired || !fp.AfterTTL.ExpiryUnseen {
		t.Fatalf("after the TTL: %+v, want expiry unseen", fp.AfterTTL)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, fp); err != nil {
		t.Fatal(err)
	}
	out := table.String()
	for _, w := range []string{"after the TTL: expired", "unknown (the server serves any id", "silent_substitution"} {
		if !strings.Contains(out, w) {
			t.Errorf("the table does not say %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "a dead session gets 400 instead of 404") {
		t.Errorf("the table says dead sessions get 400, where POST, GET and DELETE got 200:\n%s", out)
	}
	if fp.DeadStatus.GetWithCursor != nil && *fp.DeadStatus.GetWithCursor == 400 && !strings.Contains(out, "only a resume with its cursor gets 400") {
		t.Errorf("the 400 of a dead cursor's resume is not said as such:\n%s", out)
	}
}
