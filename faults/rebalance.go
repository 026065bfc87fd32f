package faults

import "context"

// Rebalance makes the reference server's router lose its session
// affinities: the next request of a session may land on a replica that never
// knew it (404), or replay it from a shared log (200, the seed's trap).
type Rebalance struct{ Name string }

func (r Rebalance) Kind() string { return "rebalance" }

func (r Rebalance) Do(_ context.Context, env Env) Outcome {
	if env.Topology == nil {
		return needTopology(r.Kind())
	}
	at := env.Since()
	env.Topology.Rebalance(r.Name)
	return Outcome{Detail: "the router forgot every session's replica", Steps: []Step{{At: at, Target: "router"}}}
}
