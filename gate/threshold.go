package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Threshold is a pass/fail condition on one metric of one group (or of all groups together),
// written as
//
//	SCOPE.METRIC OP VALUE
//
// SCOPE is a group's name or "overall"; METRIC is a name of the Metric vocabulary; OP is one of
// < <= > >= == !=; VALUE is a plain number for counts and ratios, and a duration with its unit
// (500us, 50ms, 1.5s, 2m) for latencies. false_healthy_seconds takes either (a bare number
// counts seconds). Examples:
//
//	probe.misattributed_errors == 0
//	probe.probe_latency.p99 < 50ms
//	naive.retry_amplification < 2
//	overall.errors.reset <= 10
type Threshold struct {
	Expr        string // as written
	Scope       string // a group name, or "overall"
	Metric      Metric
	Op          string
	Bound       float64 // in the metric's unit (µs for durations)
	AbortOnFail bool    // stop the run as soon as the threshold has failed for good
}

// ThresholdSyntaxError is a threshold expression that cannot be read. Offset is the byte
// offset in the expression where the problem starts, so that a workload file can point at it.
type ThresholdSyntaxError struct {
	Expr   string
	Offset int
	Msg    string // what is wrong; after a semicolon, what to do
}

func (e *ThresholdSyntaxError) Error() string {
	return fmt.Sprintf("threshold %q, column %d: %s", e.Expr, e.Column(), e.Msg)
}

// Column is the 1-based column of Offset, in characters.
func (e *ThresholdSyntaxError) Column() int {
	return utf8.RuneCountInString(e.Expr[:min(max(e.Offset, 0), len(e.Expr))]) + 1
}

var ops = []string{"<=", ">=", "==", "!=", "<", ">"} // two-character operators first

// ParseThreshold reads a threshold expression. Its error is a *ThresholdSyntaxError.
func ParseThreshold(expr string) (Threshold, error) {
	fail := func(off int, format string, args ...any) (Threshold, error) {
		return Threshold{}, &ThresholdSyntaxError{Expr: expr, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	const example = "write SCOPE.METRIC OP VALUE, e.g. probe.probe_latency.p99 < 50ms"
	if len(expr) > 256 {
		return fail(0, "is %d characters long; a threshold is one short comparison, e.g. probe.misattributed_errors == 0", len(expr))
	}
	opAt, op := -1, ""
	for i := 0; i < len(expr) && opAt < 0; i++ {
		for _, o := range ops {
			if strings.HasPrefix(expr[i:], o) {
				opAt, op = i, o
				break
			}
		}
		if opAt < 0 && expr[i] == '=' {
			return fail(i, "a lone = is not a comparison; use == (or <=, >=)")
		}
	}
	lhsStart := len(expr) - len(strings.TrimLeft(expr, " \t"))
	if opAt < 0 {
		return fail(len(expr), "no comparison; %s", example)
	}
	lhs := strings.TrimSpace(expr[:opAt])
	if lhs == "" {
		return fail(lhsStart, "nothing before %s; %s", op, example)
	}
	scope, metric, hasDot := strings.Cut(lhs, ".")
	if _, err := ParseMetric(lhs); err == nil || !hasDot {
		return fail(lhsStart, "%q does not say which group; write GROUP.%s or overall.%s", lhs, lhs, lhs)
	}
	if !validScope(scope) {
		return fail(lhsStart, "%q is not a group name (lowercase letters, digits, - and _) or overall; %s", scope, example)
	}
	m, err := ParseMetric(metric)
	if err != nil {
		return fail(lhsStart+len(scope)+1, "%v", err)
	}
	rhsAt := opAt + len(op)
	rhsAt += len(expr[rhsAt:]) - len(strings.TrimLeft(expr[rhsAt:], " \t"))
	rhs := strings.TrimRight(expr[rhsAt:], " \t")
	if rhs == "" {
		return fail(rhsAt, "nothing after %s; give the value to compare with, e.g. 0 or 50ms", op)
	}
	for _, o := range ops {
		if i := strings.Index(rhs, o); i >= 0 {
			return fail(rhsAt+i, "a second comparison; a threshold compares one metric with one value: write two thresholds")
		}
	}
	bound, msg := parseBound(m, rhs)
	if msg != "" {
		return fail(rhsAt, "%s", msg)
	}
	return Threshold{Expr: strings.TrimSpace(expr), Scope: scope, Metric: m, Op: op, Bound: bound}, nil
}

func validScope(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// parseBound reads the value side for metric m, in m's unit; msg says what is wrong.
func parseBound(m Metric, s string) (float64, string) {
	num := s
	for i, r := range s {
		if !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+' || r == 'e' && i > 0) {
			num = s[:i]
			break
		}
	}
	unit := s[len(num):]
	if strings.HasPrefix(num, "-") {
		return 0, fmt.Sprintf("%s is negative, and %s never is; use a value of 0 or more", s, m.Name)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Sprintf("%q is not a number; write e.g. 0, 2.5 or (for durations) 50ms", s)
	}
	switch m.Unit() {
	case UnitSeconds, UnitDuration:
		if unit == "" {
			if m.Unit() == UnitSeconds {
				return v, "" // the name says seconds
			}
			return 0, fmt.Sprintf("%s is a duration, got the bare number %s; add a unit, e.g. %sms", m.Name, s, s)
		}
		d, err := time.ParseDuration(strings.ReplaceAll(s, "µ", "u"))
		if err != nil {
			return 0, fmt.Sprintf("%q is not a duration; write a number and a unit (us, ms, s, m, h), e.g. 50ms", s)
		}
		if m.Unit() == UnitSeconds {
			return d.Seconds(), ""
		}
		return float64(d) / float64(time.Microsecond), ""
	case UnitCount:
		if unit != "" {
			return 0, fmt.Sprintf("%s is a count, got %q; write a plain number such as 0 or 10", m.Name, s)
		}
		if v != math.Trunc(v) {
			return 0, fmt.Sprintf("%s is a count, got %s; counts are whole numbers", m.Name, s)
		}
	default:
		if unit != "" {
			return 0, fmt.Sprintf("%s is a ratio, got %q; write a plain number such as 1.5", m.Name, s)
		}
	}
	return v, ""
}

// Holds reports whether v satisfies the threshold.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Bound
	case "<=":
		return v <= t.Bound
	case ">":
		return v > t.Bound
	case ">=":
		return v >= t.Bound
	case "==":
		return v == t.Bound
	case "!=":
		return v != t.Bound
	}
	return false
}

// Early reports whether the threshold can be judged failed before the run ends: its metric
// only grows and it bounds it from above, so once it fails it cannot pass again.
func (t Threshold) Early() bool {
	return t.Metric.Monotonic() && (t.Op == "<" || t.Op == "<=" || t.Op == "==")
}

// EarlyError says why a threshold cannot have abort_on_fail, or is nil if it can.
func (t Threshold) EarlyError() error {
	if t.Early() {
		return nil
	}
	if !t.Metric.Monotonic() {
		return fmt.Errorf("abort_on_fail needs a metric that only grows during a run (a counter, errors, false_healthy_seconds), and %s can still fall; judge it at the end instead", t.Metric.Name)
	}
	return fmt.Errorf("abort_on_fail needs an upper bound (<, <= or ==) that a growing metric can break for good, not %s; judge it at the end instead", t.Op)
}

// String is the threshold in canonical form.
func (t Threshold) String() string {
	return fmt.Sprintf("%s.%s %s %s", t.Scope, t.Metric.Name, t.Op, t.Metric.Format(t.Bound))
}
