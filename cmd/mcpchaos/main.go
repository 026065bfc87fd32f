// Command mcpchaos is a chaos and load-testing tool for MCP servers that speak the
// streamable-HTTP transport. It holds the command line only: flags (turned into an engine
// plan), signals, printing, writing the export, --procs orchestration, and the mapping of
// errors to exit codes, in exactly one place (exitCode). The run itself is package engine's.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/outfile"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Exit codes, documented in docs/commands.md ("Exit status").
const (
	exitOK          = 0
	exitRuntime     = 1   // the run could not be carried out
	exitUsage       = 2   // invalid flags, arguments or workload
	exitThresholds  = 99  // a release gate failed: a threshold (run, merge) or a regression (compare)
	exitInterrupted = 130 // SIGINT or SIGTERM
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError is a mistake in flags or arguments.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// errInterrupted ends a run that a signal stopped (its partial export is written).
var errInterrupted = engine.ErrInterrupted

func exitCode(err error) int {
	var (
		ue *usageError
		ce *engine.ConfigError
		ve *workloads.ValidationError
		nf *workloads.NotFoundError
		ge *results.GateError
		fe *results.FileError
		me *results.MismatchError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.As(err, &ge):
		return exitThresholds
	case errors.As(err, &ue), errors.As(err, &ce), errors.As(err, &ve), errors.As(err, &nf), errors.As(err, &fe), errors.As(err, &me):
		return exitUsage
	default:
		return exitRuntime
	}
}

func main() {
	smallStacks() // before anything starts: see stacks.go
	// The process is the command's: zerolog's global logger, which embedded Toxiproxy's
	// bandwidth toxic writes through (faults.NewEmbedded), must not draw over the progress view.
	zlog.Logger = zerolog.Nop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	abandon := &engine.Abandoner{}
	ctx = context.WithValue(ctx, abandonerKey{}, abandon)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal: the run drains, writes its partial export and cleans up. The
		// second: the process ends at once, after removing the proxies a run made on an
		// external toxiproxy-server (embedded proxies and the reference server live in this
		// process and end with it).
		first := <-sigs
		cancel()
		at := time.Now()
		for s := range sigs {
			if s != first || time.Since(at) >= repeatWindow {
				break
			}
		}
		fmt.Fprintln(os.Stderr, "mcpchaos: second signal: exiting at once")
		outfile.RemoveInFlight() // the export being written is lost; nothing half-written stays
		abandon.Abandon(os.Stderr)
		if k := procsSecondSignal.Load(); k != nil {
			k.Abandon() // a --procs run: its shards and reference server end first (package shards)
		}
		os.Exit(exitInterrupted)
	}()
	err := newRoot().ExecuteContext(ctx)
	if err != nil && !errors.Is(err, errInterrupted) {
		fmt.Fprintln(os.Stderr, "mcpchaos:", err)
	}
	signal.Stop(sigs)
	os.Exit(exitCode(err))
}

// repeatWindow is how soon a second signal of the same kind counts as the first one again:
// GNU timeout sends SIGTERM to the command and then to its process group, so the command gets
// two at once, and took the pair for "stop, then stop at once" (issue 30: 2 of 20 runs under
// `timeout` lost their whole export). Go does not say who sent a signal, so the same signal
// within this window is one; a second Ctrl-C after it still exits at once.
const repeatWindow = 500 * time.Millisecond

type abandonerKey struct{}

// abandonerOf is the process's Abandoner, which a second signal calls (main); a fresh one
// when there is none (tests calling run).
func abandonerOf(ctx context.Context) *engine.Abandoner {
	if a, ok := ctx.Value(abandonerKey{}).(*engine.Abandoner); ok {
		return a
	}
	return &engine.Abandoner{}
}
