package faults

import (
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"syscall"
)

// Groups are the process groups of the commands a run started: exec actions (faults and
// rollbacks), wait_for commands, steady-state command probes. Each command runs in a group
// of its own, and what it starts stays there unless it leaves on purpose (setsid); a child
// may outlive the command (a daemon it spawned, a `sleep` holding its output open). A group
// is recorded from the command's start; once the command has exited, it is kept only if a
// process is left in it (an empty group can never gain a member again, and its number may
// then be given to another process). End kills every recorded group that still has a process
// and says which, so nothing a run started outlives it. A nil *Groups records nothing.
type Groups struct {
	mu     sync.Mutex
	groups []startedGroup
}

type startedGroup struct {
	pgid int
	what string // "exec rollback.sh", for the export's note
}

// started records the group a command leads (its pid: it was started with Setpgid).
func (g *Groups) started(pgid int, what string) {
	if g == nil || pgid <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups = append(g.groups, startedGroup{pgid, what})
}

// exited forgets the group of a command that has exited and been waited for, if nothing is
// left in it.
func (g *Groups) exited(pgid int) {
	if g == nil || syscall.Kill(-pgid, 0) == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups = slices.DeleteFunc(g.groups, func(sg startedGroup) bool { return sg.pgid == pgid })
}

// End kills (SIGKILL) every recorded group that still has a process, and returns a line for
// each: what started it and its group id. Groups are forgotten once ended. It may run while
// commands still run (a second signal): theirs are killed too.
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

// run starts cmd (made with Setpgid), records its group and waits for it.
func (g *Groups) run(cmd *exec.Cmd, what string) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	g.started(cmd.Process.Pid, what)
	err := cmd.Wait()
	g.exited(cmd.Process.Pid)
	return err
}
