package truth

import (
	"strconv"
	"testing"
	"time"
)

// The estimate learns a dead status, keeps a death once past, counts a dead id served as alive
// apart from a refuted estimate, and forgets sessions the client is done with.
func TestEstimated(t *testing.T) {
	e := NewEstimated(time.Minute)
	now := time.Now()
	e.Touch("a", now.Add(-2*time.Second), true)
	if _, dead := e.DeadSince("a"); dead {
		t.Fatal("dead within its TTL")
	}
	e.ObserveDead("a", now.Add(-time.Second))
	if d, dead := e.DeadSince("a"); !dead || !d.Equal(now.Add(-time.Second)) || e.Source("a") != DeathObserved {
		t.Fatalf("after a dead status: %v %v %s", d, dead, e.Source("a"))
	}
	e.Touch("a", now, true)
	if e.ServedAfterDeath() != 1 {
		t.Errorf("a success after a dead status: served after death %d", e.ServedAfterDeath())
	}
	short := NewEstimated(time.Millisecond)
	short.Touch("b", now.Add(-time.Second), true)
	if _, dead := short.DeadSince("b"); !dead || short.Source("b") != DeathFromTTL {
		t.Fatal("not dead past its TTL")
	}
	short.Touch("b", now, true)
	if _, dead := short.DeadSince("b"); !dead || short.Refuted() != 1 {
		t.Errorf("a success after an estimated death revived it, or was not noted: refuted %d", short.Refuted())
	}
	kept := NewEstimated(time.Millisecond)
	kept.Regime.OpenStreamKeepsAlive = true
	kept.Touch("c", now.Add(-time.Second), true)
	kept.StreamOpen("c", true, now.Add(-time.Second))
	if _, dead := kept.DeadSince("c"); dead {
		t.Error("dead while a stream that keeps it alive is open")
	}
	for i := range 100000 {
		id := "s" + strconv.Itoa(i)
		e.Touch(id, now, true)
		e.Forget(id)
	}
	if n := e.Held(); n > 2*maxEnded*truthShards+1 {
		t.Errorf("holds %d sessions after 100000 ended", n)
	}
}

// Under an absolute TTL the estimate runs from the session's first success: later successes
// (activity) move nothing, so a session active to the end is estimated dead a TTL after its
// initialize, as the gateway that caps it ends it; the sliding default moves with them.
func TestEstimatedAbsoluteTTL(t *testing.T) {
	born := time.Now().Add(-90 * time.Second)
	for _, absolute := range []bool{false, true} {
		e := NewEstimated(time.Minute)
		e.Regime.AbsoluteTTL = absolute
		for i := range 4 { // a success every 20 s, the last 30 s ago
			e.Touch("a", born.Add(time.Duration(i)*20*time.Second), true)
		}
		at, dead := e.DeadSince("a")
		switch {
		case absolute && (!dead || !at.Equal(born.Add(time.Minute))):
			t.Errorf("absolute: %v %v, want dead at initialize + TTL %v", at, dead, born.Add(time.Minute))
		case !absolute && dead:
			t.Errorf("sliding: dead at %v, though the last success was 30 s ago with a TTL of 1m", at)
		}
	}
}
