package libdriver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/mcpchaos/mcpchaos/clients/policy"
)

// LibraryInfo says which client library a group ran and what it did, for the export: the
// library and its version (pinned by go.mod or the worker's package-lock.json), the options
// the group set, the protocol version the server negotiated with it, and the classes of the
// errors it gave the application, counted.
type LibraryInfo struct {
	Kind         string           `json:"kind"`    // the group's policy: gosdk, mcpgo, ts-sdk, ts-client
	Name         string           `json:"library"` // e.g. @modelcontextprotocol/sdk
	Version      string           `json:"version"`
	Options      map[string]any   `json:"options,omitempty"`
	Protocol     string           `json:"negotiated_protocol,omitempty"`
	ErrorClasses map[string]int64 `json:"error_classes,omitempty"`
}

// libReport is a library group's LibraryInfo as it grows.
type libReport struct {
	mu      sync.Mutex
	name    string
	version string
	classes map[string]int64
	pool    *tsPool // the node workers of a TypeScript kind (ts.go)
}

// Close ends what the group's library kind started beside its clients (node workers and
// their gateway). Run calls it once every client has ended its session; calling it again,
// or for a group that never ran, is safe.
func (d *Driver) Close() {
	d.lib.mu.Lock()
	p := d.lib.pool
	d.lib.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// Problems says where the group's library kind could not be measured.
func (d *Driver) Problems() []string {
	d.lib.mu.Lock()
	p := d.lib.pool
	d.lib.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.problems()
}

// maxClasses bounds the error classes kept: a class is a library's name for an error, not
// its message, so a handful is normal; a library that put messages there would be cut off.
const maxClasses = 64

func (d *Driver) noteClass(class string) {
	d.lib.mu.Lock()
	defer d.lib.mu.Unlock()
	if d.lib.classes == nil {
		d.lib.classes = map[string]int64{}
	}
	if _, ok := d.lib.classes[class]; ok || len(d.lib.classes) < maxClasses {
		d.lib.classes[class]++
	}
}

func (d *Driver) noteLibrary(name, version string) {
	d.lib.mu.Lock()
	defer d.lib.mu.Unlock()
	d.lib.name, d.lib.version = name, version
}

// Library returns what the group's client library was and did (all but the negotiated
// protocol, which is the group's), or nil for a group of our own policies (naive, probe).
func (d *Driver) Library() *LibraryInfo {
	if !policy.IsLibrary(d.e.Kind) {
		return nil
	}
	d.lib.mu.Lock()
	defer d.lib.mu.Unlock()
	return &LibraryInfo{Kind: d.e.Kind, Name: d.lib.name, Version: d.lib.version,
		Options: maps.Clone(d.e.LibraryOptions), ErrorClasses: maps.Clone(d.lib.classes)}
}

// WorkerPIDs lists the node worker processes of a TypeScript kind's group (for benchmarks
// that read their memory); nil for other kinds.
func (d *Driver) WorkerPIDs() []int {
	d.lib.mu.Lock()
	p := d.lib.pool
	d.lib.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, w := range p.workers {
		if w != nil && w.ExitedEarly() == nil {
			out = append(out, w.PID())
		}
	}
	return out
}

// Call makes one tool call with args through client i's library session, outside the
// schedule and uncounted, and returns the error the application got (for benchmarks of a
// library kind, which hold sessions with Run and call at their own pace).
func (d *Driver) Call(ctx context.Context, i int, args any) error {
	if i < 0 || i >= len(d.clients) {
		return fmt.Errorf("no client %d in group %s", i, d.e.Name)
	}
	_, conn := d.clients[i].current()
	if conn == nil {
		return fmt.Errorf("client %d of group %s holds no library session now", i, d.e.Name)
	}
	o := conn.call(ctx, d.e.Tool, args, "")
	if o.err == nil && o.isError {
		return errors.New("the tool answered isError")
	}
	return o.err
}
