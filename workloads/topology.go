package workloads

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpchaos/mcpchaos/redact"
)

// Routing rules and event-log placements of the built-in server's topology
// (refserver.Topology); the first of each list is the default.
var (
	routings  = []string{"sticky", "round-robin", "hash"}
	eventLogs = []string{"per-replica", "shared"}
)

// topology reads the built-in target's replicas, routing and event_log.
func (d *decoder) topology(m *mapping, b *BuiltinTarget) {
	b.Replicas = int(m.intIn("replicas", 1, 1, maxReplicas))
	d.replicas = b.Replicas
	b.Routing = m.oneOf("routing", routings)
	b.EventLog = eventLogs[0]
	f := m.field("event_log")
	if f == nil {
		return
	}
	s, ok := d.str(f)
	if !ok {
		return
	}
	if strings.Contains(s, "://") {
		if msg := checkRedisURL(s); msg != "" {
			d.errorf(f.node, f.path, "%s", msg)
			return
		}
		b.EventLog = s
		return
	}
	if v, ok := d.oneOf(f, append(eventLogs, "redis://HOST:PORT/DB")); ok {
		b.EventLog = v
	}
}

// checkRedisURL checks an event_log URL; "" or what is wrong and what to do.
func checkRedisURL(s string) string {
	u, err := redact.ParseURL(s) // a password in it is never echoed
	s = redact.URLString(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL (%v); write it as redis://127.0.0.1:6379/0", s, urlErr(err))
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return fmt.Sprintf("%q: an event log URL is redis:// or rediss://, e.g. redis://127.0.0.1:6379/0", s)
	case u.Hostname() == "":
		return fmt.Sprintf("%q has no host; write it as redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0", s)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Sprintf("%q: give only host, port and database, e.g. redis://127.0.0.1:6379/0", s)
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 || n > 15 {
			return fmt.Sprintf("%q: the database %q must be a number from 0 to 15, e.g. redis://127.0.0.1:6379/0", s, db)
		}
	}
	return ""
}

// RedactedEventLog is the event log as it may be printed: a Redis URL as redact.URL shows it.
func (b *BuiltinTarget) RedactedEventLog() string { return redact.URLString(b.EventLog) }

// Topological says whether the workload needs the reference server as a
// cluster (replicas behind the router): more than one replica, a shared or
// Redis event log, or a restart, rebalance or scale in its faults.
func (w *Workload) Topological() bool {
	b := w.Target.Builtin
	if b == nil {
		return false
	}
	if b.Replicas > 1 || b.EventLog != eventLogs[0] || b.Routing != routings[0] {
		return true
	}
	return w.TopologyAction() != nil
}

// TopologyAction is the first restart, rebalance or scale of the workload's faults, or nil:
// those act on the reference server of the process that runs the workload.
func (w *Workload) TopologyAction() *Fault {
	for i, f := range w.Faults {
		if f.Action != nil && contains(topologyActions, f.Action.Kind) {
			return &w.Faults[i]
		}
	}
	return nil
}
