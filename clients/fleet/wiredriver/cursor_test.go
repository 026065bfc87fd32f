package wiredriver

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// The cursor a client resumes its GET stream with, across reconnects (docs/real-servers.md,
// "Why a naive group may replay less than a probe group"): the stream's own cursor is kept
// until a newer id arrives, however many replays bring nothing (as the seed's client, and
// the WHATWG EventSource, keep theirs; the Go and TypeScript SDKs drop it after an empty
// replay); a cursor borrowed from a POST reply, when the GET stream carried no id, is replayed
// once (neither SDK borrows one at all).
func TestCursorAcrossReconnects(t *testing.T) {
	s := &wire.Session{}
	r := &reading{h: &drive.Held{S: s}}

	r.chooseCursor()
	if r.cursor != "" {
		t.Fatalf("no id read anywhere: cursor %q, want a plain GET", r.cursor)
	}

	s.NoteCursor("post-7") // a POST reply carried ids; the GET stream none
	r.chooseCursor()
	if r.cursor != "post-7" {
		t.Fatalf("borrowed: cursor %q, want post-7", r.cursor)
	}
	r.chooseCursor() // its replay brought nothing newer
	if r.cursor != "" {
		t.Fatalf("after an empty replay of a borrowed cursor: %q, want a plain GET", r.cursor)
	}
	r.chooseCursor()
	if r.cursor != "" {
		t.Fatalf("the borrowed cursor came back: %q", r.cursor)
	}
	s.NoteCursor("post-9") // a newer POST reply: borrowed once more
	if r.chooseCursor(); r.cursor != "post-9" {
		t.Fatalf("a newer POST cursor: %q, want post-9", r.cursor)
	}

	r.cursor = "get-3" // the GET stream's own id (consume sets it)
	for range 3 {      // replays that bring nothing newer leave it as it was
		if r.chooseCursor(); r.cursor != "get-3" {
			t.Fatalf("the stream's own cursor after empty replays: %q, want get-3", r.cursor)
		}
	}
}
