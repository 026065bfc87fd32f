package faults

import (
	"fmt"
	"sync"
	"syscall"
)

// Groups are the process groups of the commands a run started: exec actions (faults and
// rollbacks), wait_for commands, steady-state command probes. Each command runs in a group
// of its own, and what it starts stays there unless it leaves on purpose (setsid); a child
// may outlive the command (a daemon it spawned, a `sleep` holding its output open). End kills
// every group that still has a process when the run ends and says which, so nothing a run
// started outlives it. A nil *Groups records nothing.
type Groups struct {
	mu     sync.Mutex
	groups []startedGroup
}

type startedGroup struct {
	pgid int
	what string // "exec rollback-deploy.sh", for the export's note
}

// keep records the group a finished command led (its pid: it was started with Setpgid) if a
// process is left in it. An empty group is not recorded: it can never gain a member again,
// and once empty its number may be given to another process.
func (g *Groups) keep(pgid int, what string) {
	if g == nil || pgid <= 0 || syscall.Kill(-pgid, 0) != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups = append(g.groups, startedGroup{pgid, what})
}

// End kills (SIGKILL) every recorded group that still has a process, and returns a line for
// each: what started it and its group id. Groups are forgotten once ended.
func (g *Groups) End() []string {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	groups := g.groups
	g.groups = nil
	g.mu.Unlock()
	var ended []string
	for _, sg := range groups {
		if syscall.Kill(-sg.pgid, 0) != nil { // no process left in it
			continue
		}
		if err := syscall.Kill(-sg.pgid, syscall.SIGKILL); err == nil {
			ended = append(ended, fmt.Sprintf("%s: processes it started were still running when the run ended (process group %d); ended with their group", sg.what, sg.pgid))
		}
	}
	return ended
}
