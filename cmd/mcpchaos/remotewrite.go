package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/live"
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
	if err := live.CheckSeriesLabels(labels); err != nil {
		return &usageError{err}
	}
	return nil
}
