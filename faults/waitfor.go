package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sleep"
)

// WaitFor waits until the target is ready: a URL answers 2xx, or a command
// exits 0; polled every Interval, for at most Timeout. Not ready in time is
// a failure the run names.
type WaitFor struct {
	URL     string
	Command []string // the command and its arguments; used when URL is ""
	Timeout time.Duration
	// Interval between attempts; 0 means 500ms.
	Interval time.Duration
	// Client makes the URL requests; nil means one with a 2s timeout.
	Client *http.Client
	// Groups records each command's process group (Exec.Groups); nil records nothing.
	Groups *Groups
}

func (w WaitFor) Kind() string { return "wait_for" }

func (w WaitFor) Do(ctx context.Context, env Env) Outcome {
	interval := w.Interval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	what := w.URL
	if what == "" && len(w.Command) > 0 {
		what = w.Command[0]
	}
	var last string
	for attempt := 1; ; attempt++ {
		ok, why := w.try(ctx)
		if ok {
			return Outcome{Detail: fmt.Sprintf("%s ready after %s (%d attempts)", what, time.Since(began).Round(time.Millisecond), attempt)}
		}
		last = why
		if !sleep.For(ctx, interval) {
			return Outcome{Detail: "not ready", Err: fmt.Errorf("%s not ready within %s (%d attempts; last: %s)", what, w.Timeout, attempt, last)}
		}
	}
}

// try makes one attempt; false with what went wrong.
func (w WaitFor) try(ctx context.Context) (bool, string) {
	if w.URL != "" {
		client := w.Client
		if client == nil {
			client = &http.Client{Timeout: 2 * time.Second}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.URL, nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return true, ""
		}
		return false, "status " + resp.Status
	}
	if len(w.Command) == 0 {
		return false, "nothing to wait for"
	}
	cmd := exec.CommandContext(ctx, w.Command[0], w.Command[1:]...)
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = execWaitDelay
	err := w.Groups.run(cmd, "wait_for "+w.Command[0])
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) { // ErrWaitDelay: it exited 0
		return false, err.Error()
	}
	return true, ""
}
