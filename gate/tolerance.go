package gate

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// Tolerance says how far a metric may move between a base run and a current one before the
// move is a regression. Sign is the bad direction: +1 when growing is worse (latencies,
// misattributed errors), -1 when falling is worse (successful tool calls); 0 means the metric
// is only reported (Info). A move in the bad direction regresses when it is larger than Rel
// of the base value and larger than Abs; "may not grow at all" is Rel 0, Abs 0.
type Tolerance struct {
	Sign int
	Rel  float64 // fraction of the base value, e.g. 0.10
	Abs  float64 // in the metric's unit; µs when AbsDuration
	// AbsDuration says Abs was written as a duration (1ms): it is held in µs and converted to
	// the unit of the metric it is applied to (seconds for false_healthy_seconds).
	AbsDuration bool
}

// AbsIn is Abs in unit u.
func (t Tolerance) AbsIn(u Unit) float64 {
	if t.AbsDuration && u == UnitSeconds {
		return t.Abs / 1e6
	}
	return t.Abs
}

// Info reports whether the metric is only reported, never judged.
func (t Tolerance) Info() bool { return t.Sign == 0 }

// String writes the tolerance as a spec ParseTolerance reads.
func (t Tolerance) String() string {
	if t.Info() {
		return "info"
	}
	sign := "+"
	if t.Sign < 0 {
		sign = "-"
	}
	if t.Rel == 0 && t.Abs == 0 {
		return sign + "0"
	}
	var parts []string
	if t.Rel != 0 {
		parts = append(parts, sign+trimZeros(strconv.FormatFloat(t.Rel*100, 'f', 2, 64))+"%")
	}
	switch {
	case t.Abs != 0 && t.AbsDuration:
		parts = append(parts, sign+time.Duration(t.Abs*float64(time.Microsecond)).String())
	case t.Abs != 0:
		parts = append(parts, sign+strconv.FormatFloat(t.Abs, 'f', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Describe writes the tolerance for people, in the metric's unit.
func (t Tolerance) Describe(u Unit) string {
	switch {
	case t.Info():
		return "reported only"
	case t.Rel == 0 && t.Abs == 0 && t.Sign > 0:
		return "may not grow"
	case t.Rel == 0 && t.Abs == 0:
		return "may not fall"
	}
	verb := "grow"
	if t.Sign < 0 {
		verb = "fall"
	}
	var parts []string
	if t.Rel != 0 {
		parts = append(parts, trimZeros(strconv.FormatFloat(t.Rel*100, 'f', 2, 64))+"%")
	}
	if t.Abs != 0 {
		parts = append(parts, FormatValue(u, t.AbsIn(u)))
	}
	return "may " + verb + " " + strings.Join(parts, " and ")
}

// ToleranceRule applies a tolerance to the metrics that Pattern matches. A pattern is matched
// (path.Match, so * and ? work) against "METRIC" and "GROUP.METRIC": "probe_latency.p99" is the
// p99 of every group, "naive.*" is every metric of group naive, "*_latency.p99" every
// latency's p99.
type ToleranceRule struct {
	Pattern string
	Tol     Tolerance
}

func (r ToleranceRule) matches(group, metric string) bool {
	if ok, _ := path.Match(r.Pattern, metric); ok {
		return true
	}
	ok, _ := path.Match(r.Pattern, group+"."+metric)
	return ok
}

// Tolerances is a list of rules; for each metric the last rule that matches wins, so later
// rules (a file, then flags) refine earlier ones (the defaults).
type Tolerances []ToleranceRule

// For is the tolerance for a group's metric; Info if no rule matches.
func (ts Tolerances) For(group, metric string) Tolerance {
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].matches(group, metric) {
			return ts[i].Tol
		}
	}
	return Tolerance{}
}

// DefaultTolerances are the tolerances compare starts from:
//
//	misattributed_errors, stale_events_applied,
//	reinit_collisions, retries_against_dead      +0           may not grow at all
//	dead_session_requests, tool_calls_failed,
//	retry_amplification                          +10%
//	sessions_dead (deaths per group),
//	live_sessions_declared_dead                  +10%,+1
//	*_latency and detection_delay p50/p90/p99/mean  +10%,+1ms  grows 10% and 1ms
//	... p99.9                                    +20%,+1ms
//	server_latency.p5 (the server's floor)       +10%,+1ms
//	false_healthy_seconds                        +10%,+1s
//	errors, errors.*, calls_skipped              +10%,+3
//	tool_calls_ok                                -10%         may fall 10%
//	replayed_errors_delivered, silent_substitutions  +0       may not grow at all
//	calls_hung, errors_misclassified, listeners_silently_dead,
//	dead_session_background_requests             +10%,+2      (whether a call is cut mid-stream varies)
//	hung_seconds                                 +10%,+2
//	everything else (clients, sessions_started, drops, replays, probes, counts, min, max, ...)
//	                                             info         reported only
//
// A percentile or mean is judged only when both runs have enough samples for a change in it to
// mean more than noise (Metric.MinSamples: p99 needs 1000); otherwise it is reported only.
// The absolute floors keep a few hundred microseconds of loopback jitter from failing a
// release.
func DefaultTolerances() Tolerances {
	must := func(p, spec string) ToleranceRule {
		r, err := ParseToleranceRule(p, spec)
		if err != nil {
			panic(err)
		}
		return r
	}
	var ts Tolerances
	ts = append(ts, must("*", "info"))
	for _, c := range []string{"misattributed_errors", "stale_events_applied", "reinit_collisions", "retries_against_dead"} {
		ts = append(ts, must(c, "+0"))
	}
	ts = append(ts, must("sessions_dead", "+10%,+1"), must("live_sessions_declared_dead", "+10%,+1"))
	for _, c := range []string{"dead_session_requests", "tool_calls_failed", "retry_amplification"} {
		ts = append(ts, must(c, "+10%"))
	}
	for _, h := range histNames() {
		for _, s := range []string{"p50", "p90", "p99", "mean"} {
			ts = append(ts, must(h+"."+s, "+10%,+1ms"))
		}
		ts = append(ts, must(h+".p99.9", "+20%,+1ms"))
	}
	ts = append(ts, must(FloorHist+"."+FloorStat, "+10%,+1ms"))
	ts = append(ts, must("false_healthy_seconds", "+10%,+1s"), must("errors", "+10%,+3"), must("errors.*", "+10%,+3"),
		must("calls_skipped", "+10%,+3"),
		must("tool_calls_ok", "-10%"))
	// The library failures (docs/libraries.md).
	ts = append(ts, must("replayed_errors_delivered", "+0"), must("silent_substitutions", "+0"), must("hung_seconds", "+10%,+2"))
	for _, c := range []string{"calls_hung", "errors_misclassified", "listeners_silently_dead", "dead_session_background_requests"} {
		ts = append(ts, must(c, "+10%,+2"))
	}
	return ts
}

// ParseToleranceRule reads one rule: a pattern and a spec. A spec is "info" (report only), or a
// direction and amounts: "+0" (may not grow at all), "+10%" (may grow 10%), "+10%,+1ms" (may
// grow 10% and 1ms, i.e. regresses only past both), "-5%" (may fall 5%), "+2" (may grow by 2).
// Durations take a unit (us, ms, s); counts and ratios take plain numbers. Where the pattern
// names one metric, the amounts are checked against its unit.
func ParseToleranceRule(pattern, spec string) (ToleranceRule, error) {
	r := ToleranceRule{Pattern: pattern}
	if pattern == "" {
		return r, fmt.Errorf("empty metric pattern; name a metric, e.g. probe_latency.p99, naive.misattributed_errors or *_latency.p99")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return r, fmt.Errorf("pattern %q: %v", pattern, err)
	}
	if !strings.ContainsAny(pattern, "*?[") {
		metric := pattern
		if _, err := ParseMetric(metric); err != nil {
			if _, rest, ok := strings.Cut(pattern, "."); ok {
				if _, err2 := ParseMetric(rest); err2 == nil {
					metric, err = rest, nil
				}
			}
			if err != nil {
				return r, fmt.Errorf("pattern %q: %v", pattern, err)
			}
		}
		m, _ := ParseMetric(metric)
		r.Pattern = strings.TrimSuffix(pattern, metric) + m.Name // canonical: p999 → p99.9
	}
	spec = strings.TrimSpace(spec)
	if spec == "info" || spec == "ignore" {
		return r, nil
	}
	for i, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		sign := 0
		switch {
		case strings.HasPrefix(part, "+"):
			sign, part = 1, part[1:]
		case strings.HasPrefix(part, "-"):
			sign, part = -1, part[1:]
		case i == 0:
			sign = 1 // "10%" means "+10%"
		}
		if sign == 0 {
			sign = r.Tol.Sign
		}
		if r.Tol.Sign != 0 && sign != r.Tol.Sign {
			return r, fmt.Errorf("tolerance %q mixes + and -; one direction is the bad one: write e.g. +10%%,+1ms", spec)
		}
		r.Tol.Sign = sign
		if pct, ok := strings.CutSuffix(part, "%"); ok {
			v, err := strconv.ParseFloat(pct, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) {
				return r, fmt.Errorf("tolerance %q: %q is not a percentage; write e.g. +10%%", spec, part)
			}
			r.Tol.Rel = v / 100
			continue
		}
		if v, err := strconv.ParseFloat(part, 64); err == nil && v >= 0 && !math.IsInf(v, 0) {
			r.Tol.Abs = v
			continue
		}
		d, err := time.ParseDuration(strings.ReplaceAll(part, "µ", "u"))
		if err != nil || d < 0 {
			return r, fmt.Errorf("tolerance %q: %q is neither a percentage (10%%), a number (2) nor a duration (1ms); write e.g. +10%%,+1ms, +0 or info", spec, part)
		}
		r.Tol.Abs, r.Tol.AbsDuration = float64(d)/float64(time.Microsecond), true
	}
	return r, nil
}

// ParseToleranceArg reads a rule written PATTERN=SPEC (compare --tolerance); the pattern may
// hold '=': SPEC follows the last.
func ParseToleranceArg(s string) (ToleranceRule, error) {
	i := strings.LastIndex(s, "=")
	if i < 0 {
		return ToleranceRule{}, errors.New("want PATTERN=SPEC, e.g. probe_latency.p99=+20% or misattributed_errors=+0")
	}
	return ParseToleranceRule(s[:i], s[i+1:])
}
