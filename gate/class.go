package gate

// Class is what a metric says about the server under test, and so how compare may judge it
// (docs/gate.md, "What each number is"). A gate that judged every number alike would call the
// runner's stalls the server's regressions: skipped turns and slow samples are what a starved
// load generator produces on its own.
type Class string

const (
	// ClassHazard is an outcome of the scenario the workload exists to show: misattributed
	// errors, stale events applied, dead-session requests and their retries, re-init
	// collisions, tool calls surfaced as failures, time believed healthy while dead. Control
	// groups are judged on these only.
	ClassHazard Class = "hazard"
	// ClassLoad is a figure of the load generator, not of the server (calls_skipped, and the
	// generator section's figures, the turn_lag and dispatch_lag histograms): reported, never judged as a regression of the server.
	ClassLoad Class = "load"
	// ClassLatency is a histogram statistic that times something (percentiles, mean, min,
	// max): it moves with the runner's stalls as well as with the server.
	ClassLatency Class = "latency"
	// ClassWork is a count of work done or of what the faults caused (sessions started, tool
	// calls answered, drops, replays, transport errors, a histogram's sample count, the group
	// size): its amount follows the run's timing.
	ClassWork Class = "work"
)

// hazards are the counters of ClassHazard.
var hazards = map[string]bool{
	"misattributed_errors": true, "stale_events_applied": true, "reinit_collisions": true,
	"retries_against_dead": true, "dead_session_requests": true, "tool_calls_failed": true,
	"live_sessions_declared_dead": true,
}

// Class is what the metric says about the server (see Class).
func (m Metric) Class() Class {
	switch m.kind {
	case kindRetryAmplification, kindFalseHealthy:
		return ClassHazard
	case kindCounter:
		switch {
		case hazards[m.key]:
			return ClassHazard
		case m.key == "calls_skipped":
			return ClassLoad
		}
	case kindHist:
		switch {
		case m.key == "turn_lag", m.key == "dispatch_lag":
			return ClassLoad
		case m.stat != "count":
			return ClassLatency
		}
	}
	return ClassWork
}

// Timed reports whether the metric's value follows the run's timing, so that a stalled runner
// moves it without the server changing: latencies, amounts of work, and the hazards measured
// in time or per request (false_healthy_seconds, dead-session requests and their ratio, which
// count how many calls a loop got to send; tool failures, which a starved loop's timeouts
// make). The hazards that count events a correct client never produces (misattributed
// errors, stale events applied, re-init collisions, retries against dead sessions) are not
// timed: one is one too many, however slow the runner.
func (m Metric) Timed() bool {
	if m.KernelTimed() || m.SessionFact() {
		return false
	}
	switch m.Class() {
	case ClassLatency, ClassWork, ClassLoad:
		return true
	}
	if m.kind == kindFalseHealthy {
		return true
	}
	return m.key == "tool_calls_failed"
}

// SessionFact reports whether the metric counts what the server did to its sessions: deaths
// per group, requests that met a dead session and their ratio to the deaths, and how long a
// session lived as the server's answers show it (session_life). They are the
// server's counts (its TTL, its expiry), judged whatever the runner's load: a starved loop
// sends fewer requests, never more, and a session's death is the server's clock. (Time to
// detect a death, false_healthy_seconds, is the client's clock, and a starved client's
// timeouts fail tool calls: those stay held back on a starved runner.)
func (m Metric) SessionFact() bool {
	switch m.kind {
	case kindRetryAmplification:
		return true
	case kindCounter:
		// live_sessions_declared_dead: the server's eviction, one per session at most.
		return m.key == "sessions_dead" || m.key == "dead_session_requests" || m.key == "live_sessions_declared_dead"
	case kindHist: // a session's observed life: from the server's answers (SessionLifeHist)
		return m.key == SessionLifeHist && m.stat != "count"
	}
	return false
}

// SessionLifeHist is the histogram of the sessions' observed lives (docs/metrics.md), and
// SessionLifeStat the statistic compare judges, whatever the runner's load (docs/gate.md): the
// shortest lives, as each is an upper bound of the server's TTL (a session answered dead G
// after its last success had a TTL of G or less), and a low percentile rather than the minimum
// so that one session ended by something else (a restart, a DELETE) does not decide.
const (
	SessionLifeHist = "session_life"
	SessionLifeStat = "p10"
)

// Raced reports whether the hazard comes from a race of a client's own concurrent requests
// (reinit_collisions: a request still in flight with the old id when another loop
// re-initialized). A correct client never produces it, so wherever it appears in a judged group
// it is a regression, whatever the timing; but whether a control group shows it depends on
// which of its calls happened to overlap a re-initialization, which a starved runner changes
// (measured: 0 in one starved run of seed-incident-fast's naive group, 5 to 68 in 13 others).
func (m Metric) Raced() bool { return m.kind == kindCounter && m.key == "reinit_collisions" }

// KernelTimed reports whether the metric is the server's floor (FloorHist.FloorStat): timed
// by the kernel's clock, so the load generator's stalls are not in it, and a low percentile,
// which a server waiting for a CPU in some of its replies hardly moves. compare judges it on a
// starved runner too; server_latency's other statistics a server on the same starved machine
// does move, and they are held back as every timing row is (docs/gate.md).
func (m Metric) KernelTimed() bool {
	return m.kind == kindHist && m.key == FloorHist && m.stat == "p" && m.Name == FloorHist+"."+FloorStat
}
