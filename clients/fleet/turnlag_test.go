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
	l.release(at(250), period, func(d time.Duration) { got = append(got, d) })
	if len(got) != 2 || got[0] != 220*time.Millisecond || got[1] != 150*time.Millisecond {
		t.Errorf("corrected samples %v, want [220ms 150ms]", got)
	}
	l.take(at(300), period) // a call the generator got to on time: its sample is from its turn
	l.release(at(340), period, func(d time.Duration) { got = append(got, d) })
	if got[2] != 40*time.Millisecond {
		t.Errorf("on-time call %v, want 40ms", got[2])
	}
}
