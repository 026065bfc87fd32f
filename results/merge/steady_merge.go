package merge

import "github.com/mcpchaos/mcpchaos/results"

import "time"

// mergeSteady carries the steady state and the rollbacks of a sharded run into its merge, on
// the merged run's clock. Shard 0 runs them (engine), so there is one steady state; should
// several shards hold one (exports of other builds), the first part's is kept.
func mergeSteady(parts []results.Part, start time.Time) (*results.SteadyState, []results.ActionAt) {
	var ss *results.SteadyState
	var rbs []results.ActionAt
	for _, p := range parts {
		shift := p.Export.Run.Start.Sub(start).Seconds()
		if s := p.Export.SteadyState; s != nil && ss == nil {
			c := *s
			c.Probes = make([]results.SteadyProbe, len(s.Probes))
			for i, pr := range s.Probes {
				pr.Runs = append([]results.ProbeRun(nil), pr.Runs...)
				for j := range pr.Runs {
					pr.Runs[j].AtS += shift
				}
				c.Probes[i] = pr
			}
			ss = &c
		}
		for _, a := range p.Export.Rollbacks {
			a.StartedAtS += shift
			a.EndedAtS += shift
			if sh := p.Export.Run.Shard; sh != nil {
				idx := sh.Index
				a.Shard = &idx
			}
			rbs = append(rbs, a)
		}
	}
	return ss, rbs
}
