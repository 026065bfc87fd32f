package inspect

import (
	"slices"
	"testing"
)

// A trail of one id (a server that sent a single event) gives that id, not a panic.
func TestCursorsOfShortTrails(t *testing.T) {
	for _, tc := range []struct{ ids, want []string }{
		{[]string{"7"}, []string{"7"}},
		{[]string{"7", "10"}, []string{"7", "10"}},
		{[]string{"7", "10", "8"}, []string{"7", "10"}},
	} {
		if got := (&trail{ids: tc.ids}).cursors(3); !slices.Equal(got, tc.want) {
			t.Errorf("cursors of %v: %v, want %v", tc.ids, got, tc.want)
		}
	}
}
