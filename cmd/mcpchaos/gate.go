package main

import (
	"github.com/mcpchaos/mcpchaos/gate"
)

// flagThresholds parses the thresholds given with a flag (--threshold, --threshold-abort).
// What they may be about (the workload's groups, a metric that only grows for an abort) is
// checked once, by engine.NewPlan, whose error names the threshold's field; planError turns
// it back into the flag.
func flagThresholds(exprs []string, flag string) ([]gate.Threshold, error) {
	var ths []gate.Threshold
	for _, expr := range exprs {
		th, err := gate.ParseThreshold(expr)
		if err != nil {
			return nil, usagef("%s: %v", flag, err)
		}
		ths = append(ths, th)
	}
	return ths, nil
}
