package drive

import (
	"testing"
	"time"
)

// The pause after failed connects doubles from the group's reconnect delay up to its maximum,
// and starts over after a success.
func TestBackoffDoublesToItsCeilingAndResets(t *testing.T) {
	b := NewBackoff(100*time.Millisecond, time.Second)
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := b.Next(); got != w*time.Millisecond {
			t.Fatalf("pause %d: %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	b.Reset()
	if got := b.Next(); got != 100*time.Millisecond {
		t.Fatalf("after a reset: %v, want the base again", got)
	}
}
