package truth

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkEstimatedTruth is the hot path of a URL target's truth: every successful POST
// touches it, every applied event and every census asks it, from every worker at once. Each
// op is one session's touch followed by two questions, over 10,000 sessions.
func BenchmarkEstimatedTruth(b *testing.B) {
	e := NewEstimated(time.Minute)
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = "session-" + strconv.Itoa(i)
	}
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8) // workers outnumber cores, as a fleet's do
	b.RunParallel(func(pb *testing.PB) {
		i := int(n.Add(1)) * 7919
		for pb.Next() {
			id := ids[i%len(ids)]
			e.Touch(id, time.Now(), true)
			e.DeadSince(id)
			e.DeadSince(ids[(i+1)%len(ids)])
			i++
		}
	})
}
