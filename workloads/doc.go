// Package workloads reads workload files: what a run of mcpchaos does. A
// workload names the target (the built-in reference server, set to a regime:
// session TTL, event-log retention, GET validation, ...; or a server by URL), lays out
// the run as phases (some making tool calls, some waiting for session TTLs
// to run out: a duration "ttl+1.5s" means the target's session TTL plus
// 1.5s), defines client groups (how many clients, which policy they follow
// after a drop) and schedules faults (Toxiproxy toxics, or a proxy going
// down) on the groups' proxies.
//
// Files are YAML and read strictly: an unknown key, a wrong type, a missing
// required field, a bare number where a duration needs a unit, a reference
// to an undefined group or a fault outside the run is an error. Every
// problem in a file is reported at once, each as
//
//	file:line:col: field.path: what is wrong; what to do
//
// in a *ValidationError. Keys starting with "x-" at the top level are
// ignored, so that they can hold YAML anchors for groups to merge (<<: *x).
//
// The builtin workloads (builtin/*.yaml: the seed incident, strict GET, short
// retention, rolling deploy, affinity loss and session churn, most with a -fast
// variant of test durations; BuiltinNames lists them) are embedded; Resolve finds
// a workload by file path or builtin name, as the command line does.
//
// This package only reads and checks: it starts nothing, opens no sockets
// and knows nothing of the packages that carry a workload out. It asks the
// faults package which toxics and attributes exist, so that a fault is
// checked by the code that will inject it.
package workloads
