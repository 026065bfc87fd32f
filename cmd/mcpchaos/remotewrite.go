package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/metrics/prom"
	"github.com/mcpchaos/mcpchaos/metrics/remotewrite"
)

// pushFlags are run's --remote-write flags: push the live series to a Prometheus server
// (package remotewrite) while the run goes on, and the final values at its end.
type pushFlags struct {
	url      string
	interval time.Duration
	public   bool
}

func (pf *pushFlags) register(f *pflag.FlagSet) {
	f.StringVar(&pf.url, "remote-write", "", "push the live metrics to a Prometheus remote write URL while the run goes on, and the final values at its end, e.g. http://127.0.0.1:9090/api/v1/write")
	f.DurationVar(&pf.interval, "remote-write-interval", 5*time.Second, "how often --remote-write pushes")
	f.BoolVar(&pf.public, "remote-write-public", false, "allow a --remote-write URL whose host is not loopback")
}

// args are the flags as given, for the shard processes of --procs (each pushes its own
// series, told apart by their shard label).
func (pf *pushFlags) args() []string {
	if pf.url == "" {
		return nil
	}
	a := []string{"--remote-write", pf.url, "--remote-write-interval", pf.interval.String()}
	if pf.public {
		a = append(a, "--remote-write-public")
	}
	return a
}

// toolLabels are the labels mcpchaos sets on its own series: a run label may not take one.
var toolLabels = []string{"group", "policy", "kind", "state", "phase", "fault", "label", "value",
	"workload", "run_id", "shard", "le", "quantile", "job", "instance"}

// check checks the flags and that every run label makes a series label of its own.
func (pf *pushFlags) check(labels map[string]string) error {
	if pf.url == "" {
		return nil
	}
	if _, err := remotewrite.CheckURL(pf.url, pf.public); err != nil {
		return usagef("--remote-write: %v", err)
	}
	if pf.interval < 100*time.Millisecond || pf.interval > 10*time.Minute {
		return usagef("--remote-write-interval %s: want 100ms to 10m", pf.interval)
	}
	from := map[string]string{}
	for k := range labels {
		n := seriesLabel(k)
		if contains(toolLabels, n) {
			return usagef("--label %s: with --remote-write it becomes the series label %q, which mcpchaos sets itself; use another key", k, n)
		}
		if other, dup := from[n]; dup {
			return usagef("--label %s and --label %s both become the series label %q with --remote-write; rename one", other, k, n)
		}
		from[n] = k
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// seriesLabel is a run label's key as a Prometheus label name: '.' and '-' become '_'.
func seriesLabel(key string) string { return strings.NewReplacer(".", "_", "-", "_").Replace(key) }

// remoteWriteObserver pushes the run's series on every tick, and the final ones at Stop.
type remoteWriteObserver struct {
	fl       pushFlags
	stderr   io.Writer
	p        *remotewrite.Pusher
	finished atomic.Bool
}

func (o *remoteWriteObserver) Start(v *engine.View) error {
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
		extra[seriesLabel(k)] = val
	}
	p, err := remotewrite.Start(reg, remotewrite.Options{URL: o.fl.url, Public: o.fl.public, Labels: extra,
		UserAgent: "mcpchaos/" + version})
	if err != nil {
		return usagef("--remote-write: %v", err)
	}
	o.p = p
	fmt.Fprintf(o.stderr, "mcpchaos: pushing metrics to %s every %s (run_id %s)\n", p.URL(), o.fl.interval, v.RunID)
	return nil
}

func (o *remoteWriteObserver) Every() time.Duration { return o.fl.interval }

// Observe queues the series now; it never waits for the receiver.
func (o *remoteWriteObserver) Observe(_ *engine.View, now time.Time) { o.p.Push(now) }

// Stop does nothing: the numbers are final only once the run has counted what the server
// alone knows (calls run twice), after the observers stop; flush pushes them then.
func (o *remoteWriteObserver) Stop(*engine.View, time.Time) {}

// flush pushes the final values (mcpchaos_run_finished 1) once engine.Run has returned, and
// says what was pushed, dropped or refused. A nil observer, or one that never started, has
// nothing to flush.
func (o *remoteWriteObserver) flush() {
	if o == nil || o.p == nil {
		return
	}
	o.finished.Store(true)
	st := o.p.Stop(context.Background(), time.Now())
	fmt.Fprintf(o.stderr, "mcpchaos: remote write to %s: %d pushes sent (%d samples), %d failed, %d dropped\n",
		o.p.URL(), st.Sent, st.Samples, st.Failed, st.Dropped)
	if !st.Final {
		fmt.Fprintf(o.stderr, "warning: remote write: the final values did not reach %s; Prometheus holds the numbers of an earlier push at best\n", o.p.URL())
	}
	if st.LastErr != "" && (st.Failed > 0 || !st.Final) {
		fmt.Fprintf(o.stderr, "warning: remote write: last error: %s\n", st.LastErr)
	}
}
