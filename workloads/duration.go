package workloads

import (
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

const durationHint = "add a unit, e.g. 500ms"

// duration reads a duration value. It must be a string with a unit ("500ms",
// "30m", "1h30m"): a bare number is ambiguous (seconds? milliseconds?) and
// is rejected with a hint to add the unit.
func (d *decoder) duration(f *field) (time.Duration, bool) {
	switch v := f.node.(type) {
	case nil:
		return 0, false
	case *ast.IntegerNode, *ast.FloatNode:
		d.errorf(f.node, f.path, "must be a duration with a unit, got the bare number %s; %s", nodeText(v), durationHint)
		return 0, false
	case *ast.StringNode:
		s := strings.TrimSpace(v.Value)
		if strings.HasPrefix(strings.ToLower(s), "ttl") {
			d.errorf(f.node, f.path, "%q: ttl expressions are only allowed in phases[].duration; write a plain duration such as 2s", v.Value)
			return 0, false
		}
		dur, msg := parseDuration(s)
		if msg != "" {
			d.errorf(f.node, f.path, "%s", msg)
			return 0, false
		}
		return dur, true
	}
	d.errorf(f.node, f.path, "must be a duration such as 500ms or 30m, got %s; %s", describe(f.node), f.hint)
	return 0, false
}

// parseDuration parses a duration written with a unit. On failure it returns
// a message saying what is wrong and what to do.
func parseDuration(s string) (time.Duration, string) {
	if isNumber(s) {
		return 0, fmt.Sprintf("must be a duration with a unit, got the bare number %s; %s", s, durationHint)
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a duration; write a number and a unit (ns, us, ms, s, m, h), e.g. 500ms or 1h30m", s)
	}
	if dur > maxDuration || dur < -maxDuration {
		return 0, fmt.Sprintf("%s is longer than %s, the longest duration allowed; use a shorter one", s, fmtDur(maxDuration))
	}
	return dur, ""
}

// isNumber reports whether s is a plain (possibly signed, possibly decimal)
// number: a duration missing its unit.
func isNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	digits, dots := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// Lower bounds of the durations that drive a loop: each turn costs a request, a process or a
// notification, so a nanosecond would be a storm (issue 30: every: 1ns made 344,094 probes and
// 5,236 process launches in 20 s, took both cores and wrote a 70 MB export).
const (
	minProbeEvery    = 100 * time.Millisecond // a steady probe's every: a look at health, not load
	minRetryInterval = 10 * time.Millisecond  // a probe's retry_interval, wait_for's interval
	minCallEvery     = time.Millisecond       // a client's call_every: load, but not a spin
	minServerTick    = 10 * time.Millisecond  // the built-in server's notify_interval, keepalive (when on)
)

// loopDuration reads an optional duration that drives a loop: at least lo, or 0 where zero
// turns the loop off (zeroOff); def when absent or wrong.
func (m *mapping) loopDuration(name string, def, lo time.Duration, zeroOff bool) time.Duration {
	f := m.field(name)
	if f == nil {
		return def
	}
	v, ok := m.d.duration(f)
	if !ok || !m.d.checkDuration(f, v, 0, !zeroOff) {
		return def
	}
	if v < lo && (v != 0 || !zeroOff) {
		off := ""
		if zeroOff {
			off = " (or 0 for none)"
		}
		m.d.errorf(f.node, f.path, "%s is shorter than %s%s: each turn costs a request, a process or a message, and a shorter one is a storm, not a measurement; %s", fmtDur(v), fmtDur(lo), off, f.hint)
		return def
	}
	return v
}

// durationAtLeast reads an optional duration that must be >= lo (or > lo
// when strict), returning def when absent or wrong.
func (m *mapping) durationAtLeast(name string, def, lo time.Duration, strict bool) time.Duration {
	f := m.field(name)
	if f == nil {
		return def
	}
	v, ok := m.d.duration(f)
	if !ok || !m.d.checkDuration(f, v, lo, strict) {
		return def
	}
	return v
}

func (d *decoder) checkDuration(f *field, v, lo time.Duration, strict bool) bool {
	switch {
	case strict && v <= lo && lo == 0:
		d.errorf(f.node, f.path, "must be greater than 0, got %s; %s", fmtDur(v), f.hint)
	case strict && v <= lo:
		d.errorf(f.node, f.path, "must be longer than %s, got %s; %s", fmtDur(lo), fmtDur(v), f.hint)
	case !strict && v < lo && lo == 0:
		d.errorf(f.node, f.path, "must not be negative, got %s; %s", fmtDur(v), f.hint)
	case !strict && v < lo:
		d.errorf(f.node, f.path, "must be at least %s, got %s; %s", fmtDur(lo), fmtDur(v), f.hint)
	default:
		return true
	}
	return false
}

// fmtDur writes a duration the way a user would: "1h", "1h30m", "6.5s",
// "0s" (time.Duration.String writes "1h0m0s").
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
