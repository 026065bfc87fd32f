package workloads

import (
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// libraryOptions reads a group's `library_options`: the options of the client library its
// policy runs (gosdk, mcpgo, ts-sdk, ts-client), spelt as the library spells them, each
// checked by vocab.CheckLibraryOption where it is written.
func (d *decoder) libraryOptions(m *mapping, kind string) map[string]any {
	// The TypeScript SDKs offer the newest session revision they know and take no other: a
	// group that asks for an older one would not get it.
	if pf := m.field("protocol"); pf != nil && (kind == vocab.ClientTSSDK || kind == vocab.ClientTSClient) {
		if s, ok := pf.node.(*ast.StringNode); ok && s.Value != vocab.Protocol20251125 {
			d.errorf(pf.node, pf.path, "policy %s offers %s only; remove protocol or set it to %s", kind, vocab.Protocol20251125, vocab.Protocol20251125)
		}
	}
	f := m.field("library_options")
	if f == nil {
		return nil
	}
	if !vocab.IsLibrary(kind) {
		if kind != "" {
			d.errorf(f.key, f.path, "policy %s runs no client library, so it takes no library options; remove it, or set policy to one of %s",
				kind, strings.Join(vocab.Libraries(), ", "))
		}
		return nil
	}
	names := vocab.LibraryOptionNames(kind)
	s := &schema{}
	for _, n := range names {
		s.keys = append(s.keys, schemaKey{n, "set an option of " + kind + ": " + strings.Join(names, ", ")})
	}
	om := d.mapping(f.node, f.path, s)
	out := map[string]any{}
	for _, n := range names {
		of := om.field(n)
		if of == nil {
			continue
		}
		budget := 1
		v, ok := d.value(of.node, of.path, 0, &budget)
		if !ok {
			continue
		}
		if err := vocab.CheckLibraryOption(kind, n, v); err != nil {
			d.errorf(of.node, of.path, "%v", err)
			continue
		}
		out[n] = v
	}
	return out
}
