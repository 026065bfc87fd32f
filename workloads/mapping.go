package workloads

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/mcpchaos/mcpchaos/gate"
)

// schemaKey is one allowed key of a mapping and what to tell a user who
// gets it wrong: a hint that starts with a verb ("set how many ...").
type schemaKey struct {
	name, hint string
}

// schema is the set of keys a mapping allows.
type schema struct {
	keys []schemaKey
	// extensions lets keys starting with "x-" through unchecked, as places
	// to define YAML anchors (as in Compose files).
	extensions bool
}

func (s *schema) names() []string {
	names := make([]string, len(s.keys))
	for i, k := range s.keys {
		names[i] = k.name
	}
	return names
}

func (s *schema) hint(name string) string {
	for _, k := range s.keys {
		if k.name == name {
			return k.hint
		}
	}
	return ""
}

func (s *schema) allows(name string) bool {
	if s.extensions && strings.HasPrefix(name, "x-") {
		return true
	}
	for _, k := range s.keys {
		if k.name == name {
			return true
		}
	}
	return false
}

// mapping is a decoded YAML mapping checked against a schema: unknown,
// duplicate and malformed keys are reported when it is built; its accessors
// report missing and malformed values.
type mapping struct {
	d       *decoder
	path    string   // "" for the top level
	node    ast.Node // where errors about missing keys go
	ok      bool     // false: the value was not a mapping, or a merge failed (reported); missing keys go unreported
	s       *schema
	entries map[string]*entry
	count   int // entries seen, merges included, to bound the work
}

type entry struct {
	key, value ast.Node
}

// mapping checks that n is a mapping with only the schema's keys, merging
// "<<" keys the YAML way (explicit keys win, then earlier merged mappings).
// A null value counts as an empty mapping.
func (d *decoder) mapping(n ast.Node, path string, s *schema) *mapping {
	m := &mapping{d: d, path: path, node: n, s: s, entries: map[string]*entry{}}
	v, ok := d.resolve(n)
	if !ok || isNil(n) {
		return m // a broken alias, already reported: nothing to check
	}
	switch mn := v.(type) {
	case nil, *ast.NullNode:
		if strings.HasSuffix(path, "]") {
			d.errorf(n, path, "is an empty entry; fill it in, or remove the lone \"-\"")
			return m
		}
		m.ok = true
	case *ast.MappingNode:
		m.ok = true
		m.collect(mn, false, 0)
	default:
		keys := strings.Join(firstN(s.names(), 3), ", ")
		if path == "" {
			d.errorf(n, path, "the file must be a mapping with keys such as %s, got %s; write one \"key: value\" per line", keys, describe(v))
		} else {
			d.errorf(n, path, "must be a mapping with keys such as %s, got %s; write one \"key: value\" per line, indented under %s", keys, describe(v), path)
		}
	}
	return m
}

func (m *mapping) sub(name string) string {
	if m.path == "" {
		return name
	}
	return m.path + "." + name
}

func (m *mapping) collect(mn *ast.MappingNode, merged bool, depth int) {
	// A mapping used many times (an anchor merged into every group) has its
	// keys checked against a schema once.
	check := m.d.once(mn, m.s)
	var merges []ast.Node
	for _, mv := range mn.Values {
		if isNil(mv) {
			continue
		}
		if m.count++; m.count > maxMappingLen {
			if m.count == maxMappingLen+1 {
				m.d.errorf(mv, m.path, "has more than %d keys; remove the extra keys", maxMappingLen)
			}
			return
		}
		if !isNil(mv.Key) && mv.Key.IsMergeKey() {
			merges = append(merges, mv.Value)
			continue
		}
		k, ok := m.d.resolve(mv.Key)
		if !ok {
			continue // a broken alias as a key, already reported
		}
		name, isScalar := keyName(k)
		if !isScalar {
			if check {
				m.d.errorf(mv, m.path, "a key must be a plain word, got %s; write keys as \"name: value\"", describe(k))
			}
			continue
		}
		if prev, dup := m.entries[name]; dup {
			if !merged {
				line, col := position(prev.key)
				m.d.errorf(mv.Key, m.sub(name), "duplicate key %q (first at %d:%d); remove one of them", name, line, col)
			}
			continue
		}
		if !m.s.allows(name) {
			if !check {
				continue
			}
			m.d.errorf(mv.Key, m.sub(name), "unknown key %q; %sallowed keys here: %s",
				name, gate.DidYouMean(name, m.s.names()), strings.Join(m.s.names(), ", "))
			continue
		}
		m.entries[name] = &entry{key: mv.Key, value: mv.Value}
	}
	for _, mg := range merges {
		m.merge(mg, depth)
	}
}

// merge adds the entries of a "<<" value: a mapping or a list of mappings.
func (m *mapping) merge(n ast.Node, depth int) {
	v, ok := m.d.resolve(n)
	if !ok {
		m.ok = false // keys may be missing only because the merge is broken
		return
	}
	if depth >= 16 {
		m.d.errorf(n, m.sub("<<"), "merges nest more than 16 deep; flatten them")
		return
	}
	switch x := v.(type) {
	case *ast.MappingNode:
		m.collect(x, true, depth+1)
		return
	case *ast.SequenceNode:
		for _, e := range x.Values {
			ev, ok := m.d.resolve(e)
			if em, isMap := ev.(*ast.MappingNode); isMap {
				m.collect(em, true, depth+1)
				continue
			}
			if ok && !isNil(ev) {
				m.d.errorf(e, m.sub("<<"), "must merge mappings, got %s; use an alias of a mapping, e.g. <<: *defaults", describe(ev))
			}
			m.ok = false
		}
		return
	}
	m.d.errorf(n, m.sub("<<"), "must merge a mapping, got %s; use an alias of a mapping, e.g. <<: *defaults", describe(v))
	m.ok = false
}

func keyName(k ast.Node) (string, bool) {
	switch k.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		return nodeText(k), true
	}
	return "", false
}

// field returns the named key if it is present with a non-null value.
func (m *mapping) field(name string) *field {
	e := m.entries[name]
	if e == nil {
		return nil
	}
	v, ok := m.d.resolve(e.value)
	if ok {
		if _, null := v.(*ast.NullNode); null || v == nil {
			return nil
		}
	}
	return &field{path: m.sub(name), key: e.key, node: v, hint: m.s.hint(name)}
}

// require returns the named field, reporting it when missing.
func (m *mapping) require(name string) *field {
	f := m.field(name)
	if f == nil && m.ok {
		at := m.node
		msg := "missing"
		if e := m.entries[name]; e != nil {
			at, msg = e.key, "has no value"
		}
		m.d.errorf(at, m.sub(name), "%s; %s", msg, m.s.hint(name))
	}
	return f
}

// str returns a string value, or def when absent.
func (m *mapping) str(name, def string) string {
	if f := m.field(name); f != nil {
		if s, ok := m.d.str(f); ok {
			return s
		}
	}
	return def
}

// intIn returns an integer value in [lo, hi], or def when absent.
func (m *mapping) intIn(name string, def, lo, hi int64) int64 {
	f := m.field(name)
	if f == nil {
		return def
	}
	v, ok := m.d.integer(f)
	if !ok {
		return def
	}
	if !m.d.checkRange(f, v, lo, hi) {
		return def
	}
	return v
}

func (d *decoder) checkRange(f *field, v, lo, hi int64) bool {
	switch {
	case v < lo:
		d.errorf(f.node, f.path, "must be at least %d, got %d; %s", lo, v, f.hint)
	case v > hi:
		d.errorf(f.node, f.path, "must be at most %d, got %d; %s", hi, v, f.hint)
	default:
		return true
	}
	return false
}

// oneOf returns a value from allowed, or allowed[0] when absent.
func (m *mapping) oneOf(name string, allowed []string) string {
	f := m.field(name)
	if f == nil {
		return allowed[0]
	}
	if v, ok := m.d.oneOf(f, allowed); ok {
		return v
	}
	return allowed[0]
}

func (d *decoder) oneOf(f *field, allowed []string) (string, bool) {
	s, ok := d.str(f)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	d.errorf(f.node, f.path, "unknown value %q; %suse one of %s", s, gate.DidYouMean(s, allowed), strings.Join(allowed, ", "))
	return "", false
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
