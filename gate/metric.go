// Package gate is the vocabulary of a release gate: the names of the numbers a run measures
// (Metric: counters, errors, ratios, histogram statistics, with their units), the thresholds a
// workload sets on them, and the tolerances compare judges changes by; and the did-you-mean of
// every "unknown name" message. Workloads parse thresholds with it, results judges exports by
// it: both import it, it imports neither (only metrics, for the counter and histogram names).
//
// It reads no file and holds no state: it is names, parsing and rules.
package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Unit is what a metric's value counts. Durations are held in microseconds, like the
// histograms they come from.
type Unit string

const (
	UnitCount    Unit = "count"
	UnitRatio    Unit = "ratio"
	UnitDuration Unit = "us"
	UnitSeconds  Unit = "s" // false_healthy_seconds: the name says seconds, so does the value
)

// Metric names one number of a group's export, in the one vocabulary that thresholds, the CSV
// export, compare and the report share:
//
//	clients                    the group's client count
//	<counter>                  a counter (docs/metrics.md), e.g. misattributed_errors
//	errors, errors.<kind>      transport errors: all, or of one kind (connect, timeout, ...)
//	retry_amplification        dead_session_requests / sessions_dead
//	false_healthy_seconds      a duration in seconds (unit "s"), as its name says
//	<histogram>.<stat>         stat: count, min, max, mean, or a percentile p50, p90, p95, p99,
//	                           p999 (99.9), p99.9, p9999 (99.99), ...
type Metric struct {
	Name string // canonical, e.g. "probe_latency.p99.9"
	kind metricKind
	key  string  // counter, error kind, or histogram name
	stat string  // histogram statistic: "count", "min", "max", "mean", "p"
	pct  float64 // the percentile, for stat "p"
}

type metricKind int

const (
	kindClients metricKind = iota
	kindCounter
	kindErrors // key "" = every kind
	kindRetryAmplification
	kindFalseHealthy
	kindHist
)

// ParseMetric reads a metric name. Its error says what names exist.
func ParseMetric(s string) (Metric, error) {
	switch s {
	case "clients":
		return Metric{Name: s, kind: kindClients}, nil
	case "retry_amplification":
		return Metric{Name: s, kind: kindRetryAmplification}, nil
	case "false_healthy_seconds":
		return Metric{Name: s, kind: kindFalseHealthy}, nil
	case "errors":
		return Metric{Name: s, kind: kindErrors}, nil
	}
	for _, c := range metrics.Counters() {
		if s == c.String() {
			return Metric{Name: s, kind: kindCounter, key: s}, nil
		}
	}
	if kind, ok := strings.CutPrefix(s, "errors."); ok {
		for _, k := range errorKinds() {
			if kind == k {
				return Metric{Name: s, kind: kindErrors, key: k}, nil
			}
		}
		return Metric{}, fmt.Errorf("unknown error kind %q; %suse errors (all kinds) or errors.KIND with KIND one of %s",
			kind, DidYouMean(kind, errorKinds()), strings.Join(errorKinds(), ", "))
	}
	hist, stat, hasStat := strings.Cut(s, ".")
	for _, h := range metrics.Hists() {
		if hist != h.String() {
			continue
		}
		if !hasStat {
			return Metric{}, fmt.Errorf("%s is a histogram; name a statistic of it, e.g. %s.p99 (or .p50, .p999, .max, .mean, .count)", s, s)
		}
		m := Metric{kind: kindHist, key: hist, stat: stat}
		switch stat {
		case "count", "min", "max", "mean":
		default:
			pct, err := parsePercentile(stat)
			if err != nil {
				return Metric{}, fmt.Errorf("%s: %w", s, err)
			}
			m.stat, m.pct = "p", pct
			stat = "p" + strconv.FormatFloat(pct, 'f', -1, 64)
		}
		m.Name = hist + "." + stat
		return m, nil
	}
	return Metric{}, fmt.Errorf("unknown metric %q; %suse a counter (%s), errors, errors.KIND, retry_amplification, false_healthy_seconds, clients, or HISTOGRAM.STAT with HISTOGRAM one of %s",
		s, DidYouMean(s, MetricNames()), strings.Join(counterNames(), ", "), strings.Join(histNames(), ", "))
}

// parsePercentile reads "p99" (99), "p999" (99.9), "p9999" (99.99), "p99.9" (99.9), "p50", "p100".
func parsePercentile(stat string) (float64, error) {
	digits, ok := strings.CutPrefix(stat, "p")
	bad := fmt.Errorf("unknown statistic %q; use count, min, max, mean or a percentile such as p50, p90, p99, p999 (99.9th) or p99.9", stat)
	if !ok || digits == "" {
		return 0, bad
	}
	if !strings.Contains(digits, ".") && len(digits) > 2 && digits != "100" {
		// p999 is the 99.9th percentile, as in HdrHistogram reports and the export's p999_us.
		if !strings.HasPrefix(digits, "99") {
			return 0, bad
		}
		digits = digits[:2] + "." + digits[2:]
	}
	for _, r := range digits {
		if (r < '0' || r > '9') && r != '.' {
			return 0, bad
		}
	}
	pct, err := strconv.ParseFloat(digits, 64)
	if err != nil || pct < 0 || pct > 100 {
		return 0, bad
	}
	return pct, nil
}

// Unit is what the metric's value counts.
func (m Metric) Unit() Unit {
	switch m.kind {
	case kindRetryAmplification:
		return UnitRatio
	case kindFalseHealthy:
		return UnitSeconds
	case kindHist:
		if m.stat == "count" {
			return UnitCount
		}
		return UnitDuration
	}
	return UnitCount
}

// Monotonic reports whether the metric can only grow during a run, so that a threshold
// bounding it from above can be judged failed before the run ends.
func (m Metric) Monotonic() bool {
	switch m.kind {
	case kindCounter, kindErrors, kindFalseHealthy:
		return true
	}
	return false
}

// Counting reports whether the metric counts what happened (a counter, errors, retry
// amplification, false-healthy time) rather than timing it or sizing the group.
func (m Metric) Counting() bool {
	switch m.kind {
	case kindCounter, kindErrors, kindRetryAmplification, kindFalseHealthy:
		return true
	}
	return false
}

// Interval reports whether compare judges the metric by a confidence interval from its
// histogram: percentiles (below the 100th) and the mean.
func (m Metric) Interval() bool {
	return m.kind == kindHist && (m.stat == "mean" || (m.stat == "p" && m.pct < 100))
}

// MinSamples is how many samples a histogram statistic needs before a change in it means more
// than noise: ten beyond the percentile's tail (p50: 20, p90: 100, p99: 1000, p99.9: 10000),
// 20 for the mean; 0 for metrics that are not histogram statistics, and for count, min and max.
func (m Metric) MinSamples() int64 {
	if m.kind != kindHist {
		return 0
	}
	switch m.stat {
	case "mean":
		return 20
	case "p":
		if m.pct >= 100 || m.pct <= 0 {
			return 0
		}
		if m.pct < 50 { // a low percentile: ten samples below it (p5: 200)
			return int64(math.Ceil(10/(m.pct/100) - 1e-6))
		}
		return int64(math.Ceil(10/(1-m.pct/100) - 1e-6)) // 10/0.001 is 10000.000000000002
	}
	return 0
}

// Kind is what a metric reads: the client count, a counter, errors, retry amplification,
// false-healthy time, or a histogram statistic.
type Kind int

const (
	KindClients            Kind = Kind(kindClients)
	KindCounter            Kind = Kind(kindCounter)
	KindErrors             Kind = Kind(kindErrors)
	KindRetryAmplification Kind = Kind(kindRetryAmplification)
	KindFalseHealthy       Kind = Kind(kindFalseHealthy)
	KindHist               Kind = Kind(kindHist)
)

// Kind is what the metric reads.
func (m Metric) Kind() Kind { return Kind(m.kind) }

// Key is the counter, the error kind ("" for every kind) or the histogram the metric reads.
func (m Metric) Key() string { return m.key }

// Stat is a histogram metric's statistic: "count", "min", "max", "mean", or "p" for a
// percentile (Percentile says which).
func (m Metric) Stat() string { return m.stat }

// Percentile is the percentile (0..100) of a metric whose Stat is "p".
func (m Metric) Percentile() float64 { return m.pct }

// Format writes a value of the metric for people: counts as integers, durations with a unit.
func (m Metric) Format(v float64) string { return FormatValue(m.Unit(), v) }

// FormatValue writes a value in unit u for people: counts as integers, ratios with two
// decimals, durations with a unit (850µs, 12.4ms, 3.25s).
func FormatValue(u Unit, v float64) string {
	switch u {
	case UnitDuration:
		return fmtDuration(v)
	case UnitSeconds:
		return fmtDuration(v * 1e6)
	case UnitRatio:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// fmtDuration writes microseconds the way people read latencies: 850µs, 12.4ms, 3.25s, 2m5s.
func fmtDuration(us float64) string {
	neg := ""
	if us < 0 {
		neg, us = "-", -us
	}
	switch {
	case us < 1000:
		return neg + strconv.FormatFloat(math.Round(us), 'f', -1, 64) + "µs"
	case us < 1e6:
		return neg + trimZeros(strconv.FormatFloat(us/1e3, 'f', 2, 64)) + "ms"
	case us < 60e6:
		return neg + trimZeros(strconv.FormatFloat(us/1e6, 'f', 2, 64)) + "s"
	}
	return neg + time.Duration(us*1e3).Round(time.Second).String()
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// MetricNames lists every metric of a group in export order, with the histogram statistics
// that the CSV export and compare report.
func MetricNames() []string {
	names := []string{"clients"}
	names = append(names, counterNames()...)
	names = append(names, "retry_amplification", "false_healthy_seconds", "errors")
	for _, k := range errorKinds() {
		names = append(names, "errors."+k)
	}
	for _, h := range histNames() {
		for _, s := range histStats {
			names = append(names, h+"."+s)
			if s == "min" && h == FloorHist {
				names = append(names, h+"."+FloorStat)
			}
			if s == "min" && h == SessionLifeHist {
				names = append(names, h+"."+SessionLifeStat)
			}
		}
	}
	return names
}

// FloorHist and FloorStat name the server's floor: the 5th percentile of server_latency, the
// server timed by the kernel's clock. A stalled load generator does not move server_latency at
// all, and a server that waits for a CPU on a starved machine (the built-in target, or one
// beside the runner) waits in some of its replies, which moves its median and tail by factors
// but leaves its fastest replies alone; a server that got slower on every reply moves them all
// (measured, docs/gate.md: at load 24-28 the p50 of identical runs went from 1.0 ms to 20 ms,
// the p5 stayed within 0.22-0.56 ms, and +5 ms on every reply made it 5.5-5.6 ms).
const (
	FloorHist = "server_latency"
	FloorStat = "p5"
)

// histStats are the statistics reported per histogram, in order.
var histStats = []string{"count", "min", "p50", "p90", "p99", "p99.9", "max", "mean"}

// Metrics is MetricNames parsed.
func Metrics() []Metric {
	names := MetricNames()
	ms := make([]Metric, len(names))
	for i, n := range names {
		m, err := ParseMetric(n)
		if err != nil {
			panic(err) // the catalog parses its own names
		}
		ms[i] = m
	}
	return ms
}

func counterNames() []string {
	var s []string
	for _, c := range metrics.Counters() {
		s = append(s, c.String())
	}
	return s
}

func histNames() []string {
	var s []string
	for _, h := range metrics.Hists() {
		s = append(s, h.String())
	}
	return s
}

// ErrorKinds lists the error kinds, in order.
func ErrorKinds() []string { return errorKinds() }

func errorKinds() []string {
	var s []string
	for k := metrics.ErrConnect; k <= metrics.ErrOther; k++ {
		s = append(s, k.String())
	}
	return s
}
