package refserver

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The operations below are what faults do to a Cluster: a deploy, a load
// balancer losing its affinities, an autoscaler. Each records the deaths it
// causes with the name of the fault that asked for it.

// Slots lists the replicas that exist now, by slot number.
func (c *Cluster) Slots() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live()
}

// Restart replaces the replica in slot with a fresh process: every session
// it held in memory is lost (death cause restart, at this moment), and its
// per-replica event log is gone; a shared or Redis log keeps the events. The
// router keeps sending the replica's sessions to the slot (a restarted pod
// keeps its name), where the new process does not know them.
//
// The old process drains for grace: its streams are cut at once, but it
// keeps running and logging notifications of the sessions it can no longer
// serve (a shared log takes them) until it exits. Those are the events a
// reconnecting client replays from the shared log: the seed's stale events.
func (c *Cluster) Restart(slot int, fault string, grace time.Duration) error {
	return c.RestartAs(slot, fault, grace, "")
}

// RestartAs is Restart into a replica that speaks era (EraBoth, EraSession, EraStateless; ""
// keeps the cluster's): a step of a rolling upgrade across protocol eras.
func (c *Cluster) RestartAs(slot int, fault string, grace time.Duration, era string) error {
	if err := validEra(era); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	c.mu.Lock()
	if slot < 0 || slot >= len(c.replicas) || c.replicas[slot] == nil {
		c.mu.Unlock()
		return fmt.Errorf("restart: no replica %d (replicas now: %v)", slot, c.live())
	}
	old := c.replicas[slot]
	c.replicas[slot] = &replica{srv: c.newReplicaAs(era), gen: old.gen + 1}
	c.mu.Unlock()
	// The sessions die once the old process has stopped serving them: an event it wrote to a
	// stream before then was delivered while its session lived.
	old.srv.cutStreams()
	old.srv.awaitStreamsEnded(time.Second)
	killed := c.bury(old, slot, CauseRestart, fault)
	if grace <= 0 {
		retire(old.srv, killed)
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		retire(old.srv, killed)
		return nil
	}
	c.draining = append(c.draining, old.srv)
	time.AfterFunc(grace, func() { retire(old.srv, killed) })
	return nil
}

// bury records the deaths of a replaced replica's sessions and returns the
// logs of those it killed.
func (c *Cluster) bury(old *replica, slot int, cause, fault string) []*eventLog {
	now := old.srv.now()
	graves, killed := old.srv.deathsAt(now, cause)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, g := range graves {
		id := k.String()
		if _, seen := c.deaths[id]; seen {
			continue
		}
		if o, ok := c.owners[id]; !ok || o.slot != slot || o.gen != old.gen {
			continue
		}
		d := Death{At: time.Unix(0, g.at), Cause: g.cause, Replica: slot}
		if g.cause == cause {
			d.Fault = fault
		}
		c.deaths[id] = d
	}
	return killed
}

// Rebalance makes the router lose its affinities: sticky pins are forgotten
// and the hash is reseeded, so a session's next request may land on another
// replica, where it is unknown.
func (c *Cluster) Rebalance(fault string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.pins)
	c.seed++
	c.lostBy, c.lostWhy = fault, CauseRebalance
}

// Scale sets the number of replicas: removed replicas (the highest slots
// first) lose their sessions (cause scale); added ones start empty and take
// new sessions, and under hash routing also existing ones.
func (c *Cluster) Scale(n int, fault string) error {
	if n < 1 || n > maxReplicas {
		return fmt.Errorf("scale: %d replicas: want 1 to %d", n, maxReplicas)
	}
	c.mu.Lock()
	live := c.live()
	var removed []int
	for len(live) > n {
		slot := live[len(live)-1]
		live = live[:len(live)-1]
		removed = append(removed, slot)
	}
	olds := make([]*replica, len(removed))
	for i, slot := range removed {
		olds[i] = c.replicas[slot]
		c.replicas[slot] = nil
	}
	for range n - len(live) {
		c.replicas = append(c.replicas, &replica{srv: c.newReplica()})
	}
	c.lostBy, c.lostWhy = fault, CauseScale
	if c.topo.Routing == RouteHash {
		clear(c.pins) // the ring changed: sessions move between survivors too
		c.seed++
		c.lostWhy = CauseRebalance
	}
	c.mu.Unlock()
	for i, slot := range removed {
		killed := c.bury(olds[i], slot, CauseScale, fault)
		retire(olds[i].srv, killed)
	}
	return nil
}

func sortDeathCounts(d []DeathCount) {
	slices.SortFunc(d, func(a, b DeathCount) int {
		return cmp.Or(cmp.Compare(a.Cause, b.Cause), cmp.Compare(a.Fault, b.Fault), cmp.Compare(a.Replica, b.Replica))
	})
}
