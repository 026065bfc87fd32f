package servertime

import (
	"testing"
	"time"
)

func TestExchange(t *testing.T) {
	var got []time.Duration
	m := &Meter{Record: func(d time.Duration) { got = append(got, d) }}
	var e exchange
	ms := int64(time.Millisecond)

	e.arrived(5*ms, m) // bytes with no request out: nothing
	e.beforeWrite(10 * ms)
	e.arrived(9*ms, m) // the rest of an earlier reply, there before the request
	if !e.awaiting() {
		t.Fatal("a reply older than the request ended the exchange")
	}
	e.arrived(15*ms, m) // the reply, seen before the write returned
	if len(got) != 0 {
		t.Fatal("recorded before the write returned")
	}
	e.afterWrite(10*ms, 10*ms+ms/10, m)
	if len(got) != 1 || got[0] != 5*time.Millisecond {
		t.Fatalf("got %v, want [5ms]", got)
	}
	e.arrived(30*ms, m) // more of the same reply
	if len(got) != 1 || e.awaiting() {
		t.Fatalf("the reply's later bytes made a sample: %v", got)
	}

	e.beforeWrite(40 * ms) // the next request, its write preempted for 3 ms
	e.afterWrite(40*ms, 43*ms, m)
	e.arrived(45*ms, m)
	if len(got) != 1 || m.Unsure() != 1 {
		t.Fatalf("a write past MaxWriteSpan: got %v, unsure %d; want it left out", got, m.Unsure())
	}

	e.beforeWrite(50 * ms) // a request in two writes: timed from the last
	e.afterWrite(50*ms, 50*ms+1000, m)
	e.beforeWrite(52 * ms)
	e.afterWrite(52*ms, 52*ms+1000, m)
	e.arrived(60*ms, m)
	if len(got) != 2 || got[1] != 8*time.Millisecond {
		t.Fatalf("got %v, want 8ms last", got)
	}
}
