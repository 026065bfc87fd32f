package live

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics/prom"
)

// Metrics serves the run's live numbers at Addr (prom.Serve) while the run goes on; after it,
// the final numbers until a scrape has read them or a time has passed (Linger, called once
// the export is written). Stderr is told the endpoint's address.
type Metrics struct {
	Addr   string
	Stderr io.Writer

	lm       *prom.Endpoint
	finished atomic.Bool // read by scrapes: mcpchaos_run_finished
}

func (m *Metrics) Start(v *engine.View) error {
	labels := map[string]string{"workload": v.Workload, "run_id": v.RunID}
	if v.Shard != nil {
		labels["shard"] = strconv.Itoa(v.Shard.Index)
	}
	lm, err := prom.Serve(m.Addr, labels,
		prom.NewCollector(v.Recorders(), v.Believed),
		prom.NewRunCollector(v.Phases(), v.FaultNames(), v.Labels, func() prom.RunState {
			return prom.RunState{Phase: v.Phase(time.Now()), Faults: v.Faults(), Finished: m.finished.Load()}
		}),
		prom.NewGeneratorCollector(func() prom.GeneratorState { return generatorState(v) }))
	if err != nil {
		return fmt.Errorf("--metrics-addr %s: %w", m.Addr, err)
	}
	m.lm = lm
	fmt.Fprintf(m.Stderr, "mcpchaos: live metrics at http://%s/metrics (run_id %s)\n", lm.Addr(), v.RunID)
	return nil
}

// Stop marks the numbers final; the endpoint stays up for Linger.
func (m *Metrics) Stop(*engine.View, time.Time) {
	m.finished.Store(true)
	if m.lm != nil {
		m.lm.Finish()
	}
}

// Linger serves the final numbers for at most d (see prom.Endpoint.Linger), then closes. A nil
// Metrics, or one that never started, has nothing to serve.
func (m *Metrics) Linger(ctx context.Context, d time.Duration, stderr io.Writer) {
	if m == nil || m.lm == nil {
		return
	}
	if d > 0 {
		fmt.Fprintf(stderr, "mcpchaos: serving the final metrics at http://%s/metrics until one scrape reads them (at most %s)\n", m.lm.Addr(), d)
	}
	if err := m.lm.Linger(ctx, d); err != nil {
		fmt.Fprintln(stderr, "mcpchaos: live metrics:", err)
	}
}

// generatorState is the generator's last window for the live endpoint (zero before the first
// window closed, or in a view without a generator).
func generatorState(v *engine.View) prom.GeneratorState {
	if v.Generator == nil {
		return prom.GeneratorState{}
	}
	l := v.Generator()
	return prom.GeneratorState{
		TimerLagP99S: l.TimerLagP99 / 1e6, SchedP99S: l.SchedP99 / 1e6, CPUShare: l.CPUShare,
		CPUWaitShare: l.CPUWaitShare, GCPauseS: l.GCPause / 1e6, Starved: l.Starved, StarvedTotalS: l.StarvedS,
	}
}
