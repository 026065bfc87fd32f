package metrics

import "time"

// FalseHealthy reads the running total of time clients believed a dead session was alive.
func (g *Group) FalseHealthy() time.Duration { return time.Duration(g.falseHealthy.Load()) }
