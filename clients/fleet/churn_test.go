package fleet

import (
	"math"
	"testing"
)

// The abandoned share is what the workload says, for each client and not only on average,
// and the clients do not all abandon the same session number.
func TestChurnAbandonsItsShare(t *testing.T) {
	const clients, ends = 10, 100
	for _, share := range []float64{0, 0.25, 0.8, 1} {
		ch := newChurner(Churn{Every: 1, Abandon: share}, clients)
		firstAbandon := map[int64]bool{}
		for i := range clients {
			n, first := 0, int64(-1)
			for k := range int64(ends) {
				if ch.abandons(i, k) {
					n++
					if first < 0 {
						first = k
					}
				}
			}
			if want := share * ends; math.Abs(float64(n)-want) > 1 {
				t.Errorf("abandon %v: client %d abandoned %d of %d; want %v (±1)", share, i, n, ends, want)
			}
			firstAbandon[first] = true
		}
		if share > 0 && share < 1 && len(firstAbandon) < 2 {
			t.Errorf("abandon %v: every client first abandons the same session", share)
		}
	}
	if newChurner(Churn{}, clients) != nil {
		t.Error("a zero Churn makes a churner")
	}
}
