package faults

import (
	"context"
	"fmt"
)

// Scale sets the reference server's replica count: removed replicas lose
// their sessions, added ones start empty.
type Scale struct {
	Name     string
	Replicas int
}

func (s Scale) Kind() string { return "scale" }

func (s Scale) Do(_ context.Context, env Env) Outcome {
	if env.Topology == nil {
		return needTopology(s.Kind())
	}
	before := len(env.Topology.Slots())
	at := env.Since()
	if err := env.Topology.Scale(s.Replicas, s.Name); err != nil {
		return Outcome{Err: err}
	}
	return Outcome{Detail: fmt.Sprintf("scaled from %d to %d replicas", before, s.Replicas), Steps: []Step{{At: at, Target: "router"}}}
}
