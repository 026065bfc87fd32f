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

// A session's observed life runs from its last success (under an absolute TTL, its first) to
// its first dead answer, whatever the estimate said; later dead answers and sessions never
// answered with a success give none.
func TestObservedLife(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := NewEstimated(3 * time.Second) // declares 3 s
	e.Touch("a", t0, true)
	e.Touch("a", t0.Add(500*time.Millisecond), true)
	if life, first := e.ObserveDead("a", t0.Add(1500*time.Millisecond)); !first || life != time.Second {
		t.Errorf("sliding: life %v first %v, want 1s from the last success", life, first)
	}
	if _, first := e.ObserveDead("a", t0.Add(2*time.Second)); first {
		t.Error("a second dead answer gave a second life")
	}
	e.Touch("late", t0, true) // the estimate (3 s) passed long before the dead answer
	if life, first := e.ObserveDead("late", t0.Add(10*time.Second)); !first || life != 10*time.Second {
		t.Errorf("past the estimate: life %v first %v, want 10s", life, first)
	}
	if _, first := e.ObserveDead("never", t0); first {
		t.Error("a session never answered with a success gave a life")
	}
	abs := NewEstimated(3 * time.Second)
	abs.Regime.AbsoluteTTL = true
	abs.Touch("b", t0, true)
	abs.Touch("b", t0.Add(time.Second), true)
	if life, _ := abs.ObserveDead("b", t0.Add(2*time.Second)); life != 2*time.Second {
		t.Errorf("absolute: life %v, want 2s from the first success", life)
	}
}
