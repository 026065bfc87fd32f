package metrics

import (
	"sync"
	"testing"
	"time"
)

func TestGroupCountsAndMergesShards(t *testing.T) {
	g := NewRecorder("probe", "probe", 10)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				g.Inc(DeadSessionRequests)
				g.Record(ProbeLatency, w*1000+i, time.Duration(i+1)*time.Microsecond)
			}
		})
	}
	wg.Wait()
	g.Add(SessionsDead, 4000)
	s := g.Snapshot()
	if got := s.Counter(DeadSessionRequests); got != 8000 {
		t.Fatalf("dead_session_requests = %d, want 8000", got)
	}
	h := s.Hist(ProbeLatency)
	if h.TotalCount() != 8000 || h.Min() != 1 || h.Max() < 999 || h.Max() > 1001 {
		t.Fatalf("merged histogram: count %d min %d max %d", h.TotalCount(), h.Min(), h.Max())
	}
	if a := s.RetryAmplification(); a != 2 {
		t.Fatalf("retry amplification %v, want 2", a)
	}
}

func TestRecordClampsOutOfRange(t *testing.T) {
	g := NewRecorder("g", "naive", 1)
	g.Record(DetectionDelay, 0, -time.Second)
	g.Record(DetectionDelay, 0, 100*time.Hour)
	h := g.Snapshot().Hist(DetectionDelay)
	if h.TotalCount() != 2 || h.Min() != HistLowest || !h.ValuesAreEquivalent(h.Max(), HistHighest) {
		t.Fatalf("clamped values lost: count %d min %d max %d", h.TotalCount(), h.Min(), h.Max())
	}
}

func TestStateGauges(t *testing.T) {
	g := NewRecorder("g", "probe", 2)
	g.Enter(StateStarting)
	g.Enter(StateStarting)
	g.Move(StateStarting, StateLive)
	g.Move(StateLive, StateReconnecting)
	if g.InState(StateStarting) != 1 || g.InState(StateReconnecting) != 1 || g.InState(StateLive) != 0 {
		t.Fatalf("gauges: starting %d live %d reconnecting %d", g.InState(StateStarting), g.InState(StateLive), g.InState(StateReconnecting))
	}
}

func BenchmarkRecord(b *testing.B) {
	g := NewRecorder("g", "probe", 1)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			g.Record(ProbeLatency, i, time.Duration(i%5000)*time.Microsecond)
			i++
		}
	})
}

func BenchmarkSnapshot(b *testing.B) {
	g := NewRecorder("g", "probe", 1)
	for i := range 100000 {
		g.Record(ProbeLatency, i, time.Duration(i)*time.Microsecond)
	}
	b.ResetTimer()
	for range b.N {
		g.Snapshot()
	}
}
