package guard

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
)

// Two runs' guards: a panic in a goroutine of one run is that run's alone; the other's stop
// is never called and it sees no panic.
func TestGuardsArePerRun(t *testing.T) {
	var stopsA, stopsB atomic.Int32
	a := New(func() { stopsA.Add(1) }, io.Discard)
	b := New(func() { stopsB.Add(1) }, io.Discard)
	ctxA, ctxB := With(context.Background(), a), With(context.Background(), b)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer Catch(ctxA, "client")
		panic("boom")
	})
	wg.Go(func() { defer Catch(ctxB, "client") })
	wg.Wait()
	if p := a.First(); p == nil || p.Where != "client" || p.Value != "boom" || stopsA.Load() != 1 {
		t.Errorf("run A: panic %v, stops %d; want its own panic and one stop", p, stopsA.Load())
	}
	if p := b.First(); p != nil || stopsB.Load() != 0 {
		t.Errorf("run B saw %v and was stopped %d times", p, stopsB.Load())
	}
}

// Outside a run (no Guard in the context) a panic is still recovered and reported.
func TestCatchWithoutARun(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer Catch(context.Background(), "progress")
		panic("boom")
	}()
	<-done
}
