package faults

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sleep"
)

// Restart restarts one replica, or every replica one after another with
// Delay between them: a rolling deploy. A restarted replica loses the
// sessions it held in memory; a shared event log keeps their events.
type Restart struct {
	Name    string        // the fault's name, recorded with each death it causes
	Replica int           // the slot to restart; AllReplicas for a rolling restart
	Delay   time.Duration // between two replicas of a rolling restart
	// Grace is how long a replaced process drains: its streams are cut at
	// once, it goes on logging for the sessions it lost until it exits.
	Grace time.Duration
	// Era is the protocol era the restarted replicas speak ("": as before): a rolling upgrade
	// across eras (refserver.EraBoth, EraSession, EraStateless).
	Era string
}

// AllReplicas makes a Restart roll through every replica.
const AllReplicas = -1

func (r Restart) Kind() string { return "restart" }

func (r Restart) Do(ctx context.Context, env Env) Outcome {
	if env.Topology == nil {
		return needTopology(r.Kind())
	}
	slots := []int{r.Replica}
	if r.Replica == AllReplicas {
		slots = env.Topology.Slots()
	}
	var out Outcome
	var done []string
	first := env.Since()
	for i, slot := range slots {
		// Each replica at its own offset from the first, so slow restarts do not stretch the roll.
		if i > 0 && !sleep.For(ctx, first+time.Duration(i)*r.Delay-env.Since()) {
			break
		}
		at := env.Since()
		if err := env.Topology.RestartAs(slot, r.Name, r.Grace, r.Era); err != nil {
			out.Err = err
			break
		}
		out.Steps = append(out.Steps, Step{At: at, Target: fmt.Sprintf("replica-%d", slot)})
		done = append(done, fmt.Sprint(slot))
	}
	out.Detail = "restarted replica " + strings.Join(done, ", ")
	if len(slots) > 1 {
		out.Detail = fmt.Sprintf("restarted replicas %s, %s apart", strings.Join(done, ", "), r.Delay)
	}
	return out
}
