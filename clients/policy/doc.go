// Package policy holds what a client decides after a drop and after a failed request: a Policy
// is a small value with decision methods (naive: the seed's client; probe: asks the server
// before trusting a replay). Adding a policy touches one file, the registry in policy.go and
// its name in package vocab (workloads/vocab), where the names a workload's `policy` and
// `probe` may take are defined.
//
// It must not do I/O, count metrics or hold state: a policy is handed what happened (a
// Replay, a Failure, a probe to call) and returns a decision; the fleet acts on it.
package policy
