package fleet

import (
	"context"
	"fmt"

	"github.com/mcpchaos/mcpchaos/clients/fleet/libdriver"
	"github.com/mcpchaos/mcpchaos/clients/fleet/wiredriver"
)

// What a group of a library kind adds to its books is its driver's (package libdriver):
// these pass it on, and say nothing for the other kinds.

// LibraryInfo says which client library a group ran and what it did, for the export.
type LibraryInfo = libdriver.LibraryInfo

// Name is the group's name.
func (f *Fleet) Name() string { return f.cfg.Name }

// NotObservable lists the metrics this group's numbers cannot speak for: the session metrics
// against a stateless server, the SDK's internals for a gosdk group.
func (f *Fleet) NotObservable() []string { return f.drv.NotObservable() }

// SessionOnlyMetrics are the metrics that mean nothing without sessions (wiredriver's).
func SessionOnlyMetrics() []string { return wiredriver.SessionOnlyMetrics() }

// ListenMetrics are the figures of the stateless revision's listen stream (wiredriver's).
func ListenMetrics() []string { return wiredriver.ListenMetrics() }

// Prepare starts what a group's client kind needs beside its clients before the run's clock
// starts: the node workers of a TypeScript kind (libdriver's Prepare). Other kinds need
// nothing. An error means the group cannot run.
func (f *Fleet) Prepare(ctx context.Context) error {
	if f.lib == nil {
		return nil
	}
	return f.lib.Prepare(ctx)
}

// Close ends what the group's library kind started beside its clients (node workers and
// their gateway). Run calls it once every client has ended its session; calling it again,
// or for a group that never ran, is safe.
func (f *Fleet) Close() {
	if f.lib != nil {
		f.lib.Close()
	}
}

// libraryProblems says where the group's library kind could not be measured.
func (f *Fleet) libraryProblems() []string {
	if f.lib == nil {
		return nil
	}
	return f.lib.Problems()
}

// Library returns what the group's client library was and did, or nil for a group of our own
// policies (naive, probe).
func (f *Fleet) Library() *LibraryInfo {
	if f.lib == nil {
		return nil
	}
	info := f.lib.Library()
	if info != nil {
		info.Protocol = f.Protocol()
	}
	return info
}

// WorkerPIDs lists the worker processes of a TypeScript kind's group (for benchmarks that
// read their memory); nil for other kinds.
func (f *Fleet) WorkerPIDs() []int {
	if f.lib == nil {
		return nil
	}
	return f.lib.WorkerPIDs()
}

// Call makes one tool call with args through client i's library session, outside the
// schedule and uncounted, and returns the error the application got (for benchmarks of a
// library kind, which hold sessions with Run and call at their own pace).
func (f *Fleet) Call(ctx context.Context, i int, args any) error {
	if f.lib == nil {
		if i < 0 || i >= len(f.clients) {
			return fmt.Errorf("no client %d in group %s", i, f.cfg.Name)
		}
		return fmt.Errorf("client %d of group %s holds no library session now", i, f.cfg.Name)
	}
	return f.lib.Call(ctx, i, args)
}
