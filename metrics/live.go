package metrics

import "time"

// FalseHealthy reads the running total of time clients believed a dead session was alive.
func (g *Recorder) FalseHealthy() time.Duration { return time.Duration(g.falseHealthy.Load()) }
