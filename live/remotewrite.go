package live

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics/prom"
	"github.com/mcpchaos/mcpchaos/metrics/remotewrite"
)

// RemoteWrite pushes the run's series to a Prometheus server (package remotewrite) every
// Interval while the run goes on, and the final ones once the run has returned (Flush). Public
// allows a URL whose host is not loopback; Version goes into the User-Agent.
type RemoteWrite struct {
	URL      string
	Interval time.Duration
	Public   bool
	Version  string
	Stderr   io.Writer

	p        *remotewrite.Pusher
	finished atomic.Bool
}

// SeriesLabel is a run label's key as a Prometheus label name: '.' and '-' become '_'.
func SeriesLabel(key string) string { return strings.NewReplacer(".", "_", "-", "_").Replace(key) }

// toolLabels are the labels mcpchaos sets on its own series: a run label may not take one.
var toolLabels = []string{"group", "policy", "kind", "state", "phase", "fault", "label", "value",
	"workload", "run_id", "shard", "le", "quantile", "job", "instance"}

// CheckSeriesLabels says, before the run, whether every run label (--label) makes a series
// label of its own when pushed: not one mcpchaos sets itself, and not the same as another's
// once '.' and '-' are '_'.
func CheckSeriesLabels(labels map[string]string) error {
	from := map[string]string{}
	for k := range labels {
		n := SeriesLabel(k)
		if slices.Contains(toolLabels, n) {
			return fmt.Errorf("--label %s: with --remote-write it becomes the series label %q, which mcpchaos sets itself; use another key", k, n)
		}
		if other, dup := from[n]; dup {
			return fmt.Errorf("--label %s and --label %s both become the series label %q with --remote-write; rename one", other, k, n)
		}
		from[n] = k
	}
	return nil
}

// Start registers the run's collectors and starts the pusher; a URL the pusher refuses is an
// engine.ConfigError (nothing ran).
func (o *RemoteWrite) Start(v *engine.View) error {
	ids := prometheus.Labels{"workload": v.Workload, "run_id": v.RunID}
	if v.Shard != nil {
		ids["shard"] = strconv.Itoa(v.Shard.Index)
	}
	reg := prometheus.NewRegistry()
	wrapped := prometheus.WrapRegistererWith(ids, reg)
	for _, c := range []prometheus.Collector{
		prom.NewCollector(v.Recorders(), v.Believed),
		prom.NewRunCollector(v.Phases(), v.FaultNames(), v.Labels, func() prom.RunState {
			return prom.RunState{Phase: v.Phase(time.Now()), Faults: v.Faults(), Finished: o.finished.Load()}
		}),
		prom.NewGeneratorCollector(func() prom.GeneratorState { return generatorState(v) }),
	} {
		if err := wrapped.Register(c); err != nil {
			return err
		}
	}
	extra := map[string]string{}
	for k, val := range v.Labels {
		extra[SeriesLabel(k)] = val
	}
	p, err := remotewrite.Start(reg, remotewrite.Options{URL: o.URL, Public: o.Public, Labels: extra,
		UserAgent: "mcpchaos/" + o.Version})
	if err != nil {
		return &engine.ConfigError{Err: fmt.Errorf("--remote-write: %v", err)}
	}
	o.p = p
	fmt.Fprintf(o.Stderr, "mcpchaos: pushing metrics to %s every %s (run_id %s)\n", p.URL(), o.Interval, v.RunID)
	return nil
}

func (o *RemoteWrite) Every() time.Duration { return o.Interval }

// Observe queues the series now; it never waits for the receiver.
func (o *RemoteWrite) Observe(_ *engine.View, now time.Time) { o.p.Push(now) }

// Stop does nothing: the numbers are final only once the run has counted what the server
// alone knows (calls run twice), after the observers stop; Flush pushes them then.
func (o *RemoteWrite) Stop(*engine.View, time.Time) {}

// Flush pushes the final values (mcpchaos_run_finished 1) once engine.Run has returned, and
// says what was pushed, dropped or refused. A nil observer, or one that never started, has
// nothing to flush.
func (o *RemoteWrite) Flush() {
	if o == nil || o.p == nil {
		return
	}
	o.finished.Store(true)
	st := o.p.Stop(context.Background(), time.Now())
	fmt.Fprintf(o.Stderr, "mcpchaos: remote write to %s: %d pushes sent (%d samples), %d failed, %d dropped\n",
		o.p.URL(), st.Sent, st.Samples, st.Failed, st.Dropped)
	if !st.Final {
		fmt.Fprintf(o.Stderr, "warning: remote write: the final values did not reach %s; Prometheus holds the numbers of an earlier push at best\n", o.p.URL())
	}
	if st.LastErr != "" && (st.Failed > 0 || !st.Final) {
		fmt.Fprintf(o.Stderr, "warning: remote write: last error: %s\n", st.LastErr)
	}
}
