// Command mcpchaos is a chaos and load-testing tool for MCP servers that speak the
// streamable-HTTP transport. It is the only package that knows every other one: it wires a
// workload to a target, faults, a client fleet, metrics and results, and maps errors to exit
// codes in exactly one place (exitCode).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Exit codes, documented in the README.
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
var errInterrupted = errors.New("interrupted")

func exitCode(err error) int {
	var (
		ue *usageError
		ve *workloads.ValidationError
		nf *workloads.NotFoundError
		ge *gateError
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
	case errors.As(err, &ue), errors.As(err, &ve), errors.As(err, &nf), errors.As(err, &fe), errors.As(err, &me):
		return exitUsage
	default:
		return exitRuntime
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal: the run drains, writes its partial export and cleans up. The
		// second: the process ends at once, after removing the proxies a run made on an
		// external toxiproxy-server (embedded proxies and the reference server live in this
		// process and end with it).
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "mcpchaos: second signal: exiting at once")
		if r := secondSignal.Load(); r != nil {
			r.abandon()
		}
		if k := procsSecondSignal.Load(); k != nil {
			k.abandon() // a --procs run: its shards and reference server end first (procs.go)
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

// secondSignal is the run in progress, whose external proxies a second signal removes.
var secondSignal atomic.Pointer[runner]

// abandon removes the run's proxies from an external toxiproxy-server, waiting at most 3 s.
func (r *runner) abandon() {
	ext := r.ext.Load()
	if ext == nil {
		return
	}
	done := make(chan error, 1)
	go func() { done <- ext.Close() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpchaos: removing proxies:", err)
		}
	case <-time.After(3 * time.Second):
		fmt.Fprintf(os.Stderr, "mcpchaos: the toxiproxy-server did not answer within 3s; remove what is left with mcpchaos faults clean --toxiproxy URL --prefix %s\n", ext.Prefix())
	}
}
