package workloads

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"

	"github.com/goccy/go-yaml/ast"
)

// The group keys that say how a client behaves on the wire against a real server: the tool
// call's arguments, progress tokens, the log level it sets, the roots it offers and the
// replies it scripts to the server's requests (the fleet's GroupConfig).

// maxValueNodes bounds a free-form value (arguments, a scripted reply): aliases of aliases
// must not make it grow without end.
const maxValueNodes = 10000

// value reads a free-form YAML value as JSON would hold it: mappings with plain keys, lists,
// strings, numbers, booleans and null. budget counts the nodes still allowed.
func (d *decoder) value(n ast.Node, path string, depth int, budget *int) (any, bool) {
	*budget--
	if *budget < 0 {
		d.errorf(n, path, "is too large (more than %d values, aliases included); write a smaller value", maxValueNodes)
		return nil, false
	}
	if depth > 32 {
		d.errorf(n, path, "nests more than 32 levels; flatten it")
		return nil, false
	}
	v, ok := d.resolve(n)
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case nil, *ast.NullNode:
		return nil, true
	case *ast.IntegerNode:
		return intValue(x.Value), true
	case *ast.FloatNode:
		if math.IsInf(x.Value, 0) || math.IsNaN(x.Value) {
			break
		}
		return x.Value, true
	case *ast.BoolNode:
		return x.Value, true
	case *ast.StringNode:
		return x.Value, true
	case *ast.SequenceNode:
		out := make([]any, 0, len(x.Values))
		for i, e := range x.Values {
			ev, ok := d.value(e, fmt.Sprintf("%s[%d]", path, i), depth+1, budget)
			if !ok {
				return nil, false
			}
			out = append(out, ev)
		}
		return out, true
	case *ast.MappingNode:
		out := map[string]any{}
		for _, mv := range x.Values {
			if isNil(mv) || isNil(mv.Key) {
				continue
			}
			k, kok := d.resolve(mv.Key)
			name, isScalar := keyName(k)
			if !kok || !isScalar || mv.Key.IsMergeKey() {
				d.errorf(mv, path, "a key must be a plain word, got %s; write \"name: value\"", describe(k))
				return nil, false
			}
			if _, dup := out[name]; dup {
				d.errorf(mv.Key, path+"."+name, "duplicate key %q; remove one of them", name)
				return nil, false
			}
			ev, ok := d.value(mv.Value, path+"."+name, depth+1, budget)
			if !ok {
				return nil, false
			}
			out[name] = ev
		}
		return out, true
	}
	d.errorf(n, path, "must be a JSON value (a mapping, list, string, number, true, false or null), got %s", describe(v))
	return nil, false
}

// arguments reads a group's `arguments`: a mapping, the tool call's arguments.
func (d *decoder) arguments(m *mapping) map[string]any {
	f := m.field("arguments")
	if f == nil {
		return nil
	}
	budget := maxValueNodes
	v, ok := d.value(f.node, f.path, 0, &budget)
	if !ok {
		return nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		d.errorf(f.node, f.path, "must be a mapping of argument names to values; %s", f.hint)
		return nil
	}
	// Every call marshals and sends these: bounded as JSON, aliases expanded (the
	// document's expansion bound keeps this marshal itself small).
	if b, err := json.Marshal(obj); err != nil || len(b) > MaxArgumentsBytes {
		d.errorf(f.node, f.path, "are %d bytes as JSON once aliases are expanded, more than the %d allowed per call; send smaller arguments", len(b), MaxArgumentsBytes)
		return nil
	}
	return obj
}

// roots reads a group's `roots`: a list of {uri, name}.
func (d *decoder) roots(m *mapping) []vocab.Root {
	f := m.field("roots")
	if f == nil {
		return nil
	}
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil
	}
	out := []vocab.Root{}
	for i, e := range entries {
		rm := d.mapping(e, fmt.Sprintf("%s[%d]", f.path, i), &rootSchema)
		r := vocab.Root{URI: rm.str("uri", ""), Name: rm.str("name", "")}
		if uf := rm.require("uri"); uf != nil && !strings.Contains(r.URI, "://") {
			d.errorf(uf.node, uf.path, "%q is not a URI; write one such as file:///srv/app", r.URI)
		}
		out = append(out, r)
	}
	return out
}

var rootSchema = schema{keys: []schemaKey{
	{"uri", "set the root's URI, e.g. uri: file:///srv/app"},
	{"name", "set the root's name, e.g. name: app"},
}}

var repliesSchema = schema{keys: []schemaKey{
	{vocab.MethodSampling, "script the result of sampling/createMessage, e.g. {role: assistant, content: {type: text, text: ok}, model: test}"},
	{vocab.MethodElicitation, "script the result of elicitation/create, e.g. {action: decline}"},
}}

// serverReplies reads a group's `server_replies`: scripted results by server method.
func (d *decoder) serverReplies(m *mapping) map[string]json.RawMessage {
	f := m.field("server_replies")
	if f == nil {
		return nil
	}
	rm := d.mapping(f.node, f.path, &repliesSchema)
	out := map[string]json.RawMessage{}
	for _, k := range repliesSchema.keys {
		kf := rm.field(k.name)
		if kf == nil {
			continue
		}
		budget := maxValueNodes
		v, ok := d.value(kf.node, kf.path, 0, &budget)
		if !ok {
			continue
		}
		if _, isObj := v.(map[string]any); !isObj {
			d.errorf(kf.node, kf.path, "must be a mapping (the result object); %s", kf.hint)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			d.errorf(kf.node, kf.path, "cannot be written as JSON: %v", err)
			continue
		}
		out[k.name] = b
	}
	return out
}
