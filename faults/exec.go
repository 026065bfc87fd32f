package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Exec runs a command as a step of the run, as Chaos Toolkit's process
// action does: a deploy script, `kubectl rollout restart`, anything that
// changes the system under test. Its output and exit status go into the
// export; a non-zero exit or a timeout is a failure the run names. After a
// successful command, WaitFor (if set) waits until the target is ready again.
//
// The command runs in its own process group; on timeout (or when the run
// ends) that group, which holds only what the command started, is killed.
type Exec struct {
	Command string
	Args    []string
	Env     []string      // NAME=value, added to mcpchaos's own environment
	Timeout time.Duration // 0 means DefaultExecTimeout
	// MaxOutput bounds the output kept (the first bytes); 0 means
	// DefaultMaxOutput.
	MaxOutput int
	// Redact cuts secrets (the values of Env, the target's headers) out of
	// the output before it is kept. nil keeps it as is.
	Redact  func([]byte) []byte
	WaitFor *WaitFor
	// Groups records the command's process group, for the run to end what it left running;
	// nil records nothing.
	Groups *Groups
}

// Defaults of Exec.
const (
	DefaultExecTimeout = 5 * time.Minute
	DefaultMaxOutput   = 64 << 10
	// execWaitDelay is how long a finished command's output pipes may stay
	// open (a child it left running holds them) before they are closed.
	execWaitDelay = 2 * time.Second
)

func (e Exec) Kind() string { return "exec" }

func (e Exec) Do(ctx context.Context, env Env) Outcome {
	out := e.run(ctx, env)
	if out.Err != nil || e.WaitFor == nil {
		return out
	}
	ready := e.WaitFor.Do(ctx, env)
	out.Detail += "; " + ready.Detail
	out.Err = ready.Err
	return out
}

func (e Exec) run(ctx context.Context, env Env) Outcome {
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Command, e.Args...)
	cmd.Env = append(os.Environ(), e.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = execWaitDelay
	buf := &boundedBuffer{max: orDefault(e.MaxOutput, DefaultMaxOutput)}
	cmd.Stdout, cmd.Stderr = buf, buf
	out := Outcome{Command: append([]string{e.Command}, e.Args...)}
	if env.Since != nil {
		out.Steps = []Step{{At: env.Since(), Target: "exec"}}
	}
	err := e.Groups.run(cmd, "exec "+e.Command)
	output := buf.Bytes()
	if e.Redact != nil {
		output = e.Redact(output)
	}
	out.Output, out.Truncated = string(output), buf.dropped > 0
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() >= 0 {
		code := cmd.ProcessState.ExitCode()
		out.ExitStatus = &code
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		out.Detail = fmt.Sprintf("%s exited 0", e.Command)
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited 0; a process it started holds its output open (a daemon, a background
		// sleep). The verdict is the command's; the output is what came within execWaitDelay,
		// and the process is ended with its group when the run ends (Groups).
		out.Detail = fmt.Sprintf("%s exited 0 (a process it started kept its output open; its output was read for %s after it exited)", e.Command, execWaitDelay)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		out.Err = fmt.Errorf("%s did not finish within %s; its process group was killed", e.Command, timeout)
		out.Detail = "timed out"
	case ctx.Err() != nil:
		out.Err = fmt.Errorf("%s was stopped with the run; its process group was killed", e.Command)
		out.Detail = "stopped"
	case errors.As(err, &exitErr) && out.ExitStatus != nil:
		out.Err = fmt.Errorf("%s exited with status %d", e.Command, *out.ExitStatus)
		out.Detail = fmt.Sprintf("%s exited %d", e.Command, *out.ExitStatus)
	default:
		out.Err = fmt.Errorf("running %s: %w", e.Command, err)
		out.Detail = "did not run"
	}
	return out
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// boundedBuffer keeps the first max bytes written to it and counts the rest.
// stdout and stderr share it; exec serialises their writes when both are the
// same writer.
// It has no ReadFrom, so io.Copy goes through Write and the bound holds.
type boundedBuffer struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if room >= len(p) {
		return b.buf.Write(p)
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (b *boundedBuffer) Bytes() []byte { return b.buf.Bytes() }
