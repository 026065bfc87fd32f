package fleet

import (
	"testing"
	"time"
)

// The generator's own lag before a call is the runner's: the call's corrected sample starts
// when the generator got to it, and turns missed behind the call still count from their own.
func TestTurnLagLeftOutOfTheCorrectedSample(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	period := 100 * time.Millisecond
	var l loopTurns
	if !l.take(at(0), period) {
		t.Fatal("an idle loop refused its turn")
	}
	if lag := l.begin(at(30)); lag != 30*time.Millisecond {
		t.Errorf("turn lag %v, want 30ms", lag)
	}
	l.take(at(100), period) // missed behind the call
	var got []time.Duration
	l.release(at(250), 0, period, func(d time.Duration) { got = append(got, d) })
	if len(got) != 2 || got[0] != 220*time.Millisecond || got[1] != 150*time.Millisecond {
		t.Errorf("corrected samples %v, want [220ms 150ms]", got)
	}
	l.take(at(300), period) // a call the generator got to on time: its sample is from its turn
	l.release(at(340), 0, period, func(d time.Duration) { got = append(got, d) })
	if got[2] != 40*time.Millisecond {
		t.Errorf("on-time call %v, want 40ms", got[2])
	}
}

// The dispatch lag of a call's exchanges (the generator's own part of the wait inside them) is
// left out of every corrected sample of the turn, missed turns included, and a sample never
// goes below zero.
func TestDispatchLagLeftOutOfTheCorrectedSample(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	period := 100 * time.Millisecond
	var l loopTurns
	l.take(at(0), period)
	l.begin(at(10))         // 10 ms of turn lag
	l.take(at(100), period) // missed behind the call
	var got []time.Duration
	record := func(d time.Duration) { got = append(got, d) }
	l.release(at(250), 15*time.Millisecond, period, record)
	if want := []time.Duration{225 * time.Millisecond, 135 * time.Millisecond}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("corrected samples %v, want %v (turn lag and dispatch lag left out)", got, want)
	}
	got = nil
	l.take(at(300), period)
	l.release(at(302), 5*time.Millisecond, period, record)
	if len(got) != 1 || got[0] != 0 {
		t.Fatalf("a call whose measured lag exceeds its wait recorded %v, want [0s]", got)
	}
}
