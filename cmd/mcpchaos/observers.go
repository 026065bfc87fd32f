package main

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// progressObserver shows the run's progress (progress.go) from its start to its end.
type progressObserver struct {
	mode string
	out  io.Writer

	mu    sync.Mutex
	timer *time.Timer
	stop  func()
	done  bool
}

func (p *progressObserver) Every() time.Duration            { return 0 }
func (p *progressObserver) Observe(*engine.View, time.Time) {}

// Start shows progress from the run's start: with a start time ahead, nothing is shown while
// the run waits for it.
func (p *progressObserver) Start(v *engine.View) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(time.Until(v.Start), func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.done {
			p.stop = startProgress(p.mode, p.out, v.Start, v.Planned, viewStatus(v))
		}
	})
	return nil
}

func (p *progressObserver) Stop(*engine.View, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.timer.Stop()
	if p.stop != nil {
		p.stop()
	}
}

// viewStatus reads every group's progress row from the run's view. It is called from a
// ticker, never from the workers: they only bump atomics, which it reads.
func viewStatus(v *engine.View) statusSource {
	return func() []groupStatus {
		gs := v.Groups()
		out := make([]groupStatus, len(gs))
		for i, g := range gs {
			c, rec := g.Census, g.Recorder
			s := groupStatus{
				Name: g.Name, Live: c.Live, Reconnecting: c.Reconnecting + c.Reinit,
				BelievedLiveButDead: c.BelievedLiveButDead,
				DeadDetected:        rec.Get(metrics.SessionsDeadDetected),
				Misattributed:       rec.Get(metrics.MisattributedErrors),
			}
			for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
				if n := rec.Errors(k); n > 0 {
					if s.Errors == nil {
						s.Errors = map[string]int64{}
					}
					s.Errors[k.String()] = n
				}
			}
			out[i] = s
		}
		return out
	}
}

// metricsObserver serves the run's live numbers at --metrics-addr (livemetrics.go) while the
// run goes on.
type metricsObserver struct {
	addr   string
	stderr io.Writer
	stop   func()
}

func (m *metricsObserver) Every() time.Duration            { return 0 }
func (m *metricsObserver) Observe(*engine.View, time.Time) {}

func (m *metricsObserver) Start(v *engine.View) error {
	labels := map[string]string{"workload": v.Workload}
	if v.Shard != nil {
		labels["shard"] = strconv.Itoa(v.Shard.Index)
	}
	bound, stop, err := serveMetrics(m.addr, v.Recorders(), v.Believed, labels)
	if err != nil {
		return err
	}
	m.stop = stop
	fmt.Fprintf(m.stderr, "mcpchaos: live metrics at http://%s/metrics\n", bound)
	return nil
}

func (m *metricsObserver) Stop(*engine.View, time.Time) {
	if m.stop != nil {
		m.stop()
	}
}
