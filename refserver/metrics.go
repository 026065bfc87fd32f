package refserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The server's own Prometheus metrics, at MetricsPath of an Instance: what an operator of a
// real MCP server watches (sessions held, their memory, the answers given), so that a
// workload can check the reference server the way a team checks its staging server
// (docs/session-leaks.md). They use the Prometheus client library the way mcpchaos's own
// /metrics does (metrics/prometheus.go): a collector that reads the counters at scrape time,
// so no request pays for the exposition. Every name is defined in docs/metrics.md.

// MetricsPath is where an Instance serves its Prometheus metrics.
const MetricsPath = "/metrics"

// MetricsPrefix begins the name of every metric of the reference server.
const MetricsPrefix = "mcpchaos_refserver_"

// statusCounts counts the answers of the MCP endpoint by HTTP status; a status outside
// 100-599 (which net/http would refuse) counts as 0.
type statusCounts [600]atomic.Int64

func (sc *statusCounts) add(code int) {
	if code < 100 || code >= len(sc) {
		code = 0
	}
	sc[code].Add(1)
}

// countingWriter notes the status a handler answered with.
type countingWriter struct {
	http.ResponseWriter
	code int
}

func (c *countingWriter) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the SSE streams flush).
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// counted wraps h so that sc counts its answers by status. A stream is counted when its
// headers go out, not when it ends.
func counted(h http.Handler, sc *statusCounts) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		defer func() { sc.add(max(cw.code, http.StatusOK)) }() // nothing written: net/http sends 200
		h.ServeHTTP(cw, r)
	})
}

// collector exposes an Instance's numbers, read at scrape time.
type collector struct {
	inst  *Instance
	codes *statusCounts
	descs map[string]*prometheus.Desc
}

// docRef ends every HELP text: where each metric is defined.
const docRef = " Defined in docs/metrics.md of the mcpchaos repository."

// collectorMetrics are the collector's metrics without their labels: name → help.
var collectorMetrics = map[string]string{
	"sessions_held":            "Session records the server holds: live sessions, and dead ones not yet reclaimed (with --leak: never).",
	"sessions_live":            "Sessions alive now.",
	"sessions_opened_total":    "Sessions created by initialize.",
	"sessions_deleted_total":   "Sessions ended by the client's DELETE.",
	"sessions_expired_total":   "Sessions ended by the idle TTL, as the reaper found them.",
	"sessions_refused_total":   "Initializes answered 503 because the server held max_sessions sessions.",
	"max_sessions":             "The cap on sessions held (0: none).",
	"wrong_era_requests_total": "Requests of a protocol era the server does not speak (era: session or stateless), answered as such a server does.",
	"streams_open":             "GET streams open now.",
	"event_logs":               "Event logs the server keeps, one per session, some outliving it.",
	"event_log_entries":        "Events kept in the event logs.",
	"event_log_bytes":          "Bytes of the events kept in the event logs (the encoded messages).",
	"requests_total":           "Requests to the MCP endpoint by the HTTP status answered.",
}

func newCollector(inst *Instance, codes *statusCounts) *collector {
	c := &collector{inst: inst, codes: codes, descs: map[string]*prometheus.Desc{}}
	for name, help := range collectorMetrics {
		var labels []string
		if name == "requests_total" {
			labels = []string{"code"}
		}
		c.descs[name] = prometheus.NewDesc(MetricsPrefix+name, help+docRef, labels, nil)
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st, z := c.inst.Stats(), c.inst.logSize()
	gauge := func(name string, v int64) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, float64(v))
	}
	counter := func(name string, v int64) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, float64(v))
	}
	gauge("sessions_held", st.SessionsHeld)
	gauge("sessions_live", st.SessionsLive)
	counter("sessions_opened_total", st.SessionsCreated)
	counter("sessions_deleted_total", st.SessionsDeleted)
	counter("sessions_expired_total", st.SessionsExpired)
	counter("sessions_refused_total", st.SessionsRefused)
	counter("wrong_era_requests_total", st.WrongEra)
	gauge("max_sessions", int64(c.inst.config().MaxSessions))
	gauge("streams_open", st.StreamsOpen)
	gauge("event_logs", z.Logs)
	gauge("event_log_entries", z.Entries)
	gauge("event_log_bytes", z.Bytes)
	for code := range c.codes {
		if n := c.codes[code].Load(); n > 0 {
			ch <- prometheus.MustNewConstMetric(c.descs["requests_total"], prometheus.CounterValue, float64(n), strconv.Itoa(code))
		}
	}
}

// metricsHandler serves the instance's metrics and its process's (RSS, CPU, open files:
// mcpchaos_refserver_process_*; under `mcpchaos run` the process is mcpchaos itself, clients
// included). Each instance has a registry of its own: several may run in one process.
func metricsHandler(inst *Instance, codes *statusCounts) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(inst, codes),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{Namespace: "mcpchaos_refserver"}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// logSize is what the event logs keep: each distinct log store once (a shared one is every
// replica's).
func (c *Cluster) logSize() logSize {
	c.mu.Lock()
	stores := map[*logStore]bool{}
	for _, r := range c.replicas {
		if r != nil {
			stores[r.srv.logs] = true
		}
	}
	c.mu.Unlock()
	var t logSize
	for st := range stores {
		z := st.size()
		t.Logs, t.Entries, t.Bytes = t.Logs+z.Logs, t.Entries+z.Entries, t.Bytes+z.Bytes
	}
	return t
}

// SessionsPath answers the instance's session counts as JSON, for a status-page probe (an http
// probe's json_field, e.g. sessions.held) where no Prometheus is at hand: the same numbers as
// the mcpchaos_refserver_sessions_* series.
const SessionsPath = "/debug/sessions"

// sessionsJSON is SessionsPath's answer.
func sessionsJSON(inst *Instance) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		st := inst.Stats()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]map[string]int64{"sessions": {
			"held": st.SessionsHeld, "live": st.SessionsLive, "opened": st.SessionsCreated,
			"deleted": st.SessionsDeleted, "expired": st.SessionsExpired, "refused": st.SessionsRefused,
			"max": int64(inst.config().MaxSessions),
		}})
	})
}
