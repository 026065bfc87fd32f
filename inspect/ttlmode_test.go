package inspect

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// With --ttl, inspect keeps one session busy (a ping every quarter of the TTL) through the
// wait: the reference server with ttl_mode absolute ends it at the TTL however active and is
// named absolute, with its hazard; the reference server's default and the Go SDK's server
// (both sliding) keep it and are named sliding.
func TestInspectTellsAbsoluteTTL(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		url        func(t *testing.T) *url.URL
	}{
		{"reference absolute", "absolute", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: peerTTL, TTLMode: refserver.TTLAbsolute})
		}},
		{"reference sliding", "sliding", func(t *testing.T) *url.URL {
			return referenceServer(t, refserver.Config{SessionTTL: peerTTL})
		}},
		{"go-sdk", "sliding", func(t *testing.T) *url.URL { u, _ := peerAt(t, peers.GoSDK, peerTTL); return u }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.url(t)
			fp := inspectURL(t, u, peerTTL)
			if fp.TTLMode != tc.want {
				t.Fatalf("ttl_mode %q, want %q (notes %q)", fp.TTLMode, tc.want, fp.Notes)
			}
			var table bytes.Buffer
			if err := WriteTable(&table, fp); err != nil {
				t.Fatal(err)
			}
			row := ""
			for _, line := range strings.Split(table.String(), "\n") {
				if strings.HasPrefix(line, "ttl mode (activity keeps a session)") {
					row = line
				}
			}
			if !strings.HasSuffix(row, " "+tc.want) {
				t.Errorf("the table's ttl mode row %q does not say %s:\n%s", row, tc.want, table.String())
			}
			hazard := false
			for _, h := range fp.Verdict.Hazards {
				hazard = hazard || h.Name == "absolute_ttl"
			}
			if hazard != (tc.want == "absolute") {
				t.Errorf("absolute_ttl hazard %v for ttl_mode %s", hazard, tc.want)
			}
		})
	}
}
