package workloads

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

var faultSchema = schema{keys: []schemaKey{
	{"name", "name the fault with lowercase letters, digits, - and _, e.g. name: lb-idle-timeout"},
	{"toxic", "set the kind of fault: " + strings.Join(vocab.Toxics(), ", ") + "; or make it an action: " + strings.Join(actionKinds, ", ")},
	{"stream", "set the direction the toxic acts on: downstream (server to client) or upstream"},
	{"attributes", "set the toxic's attributes, e.g. attributes: {timeout: 60000}"},
	{"groups", "list the client groups whose proxy gets the fault, e.g. [naive, probe]; leave it out for all groups"},
	{"at", "set when the fault starts, as an offset from the start of the run, e.g. 2m"},
	{"for", "set how long the fault lasts, e.g. 30s; leave it out to keep it until the end of the run"},
	{ActionRestart, "restart replicas of the built-in server, e.g. restart: {replica: all, delay: 2s} (a rolling deploy)"},
	{ActionRebalance, "make the built-in server's router lose its session affinities: rebalance: {}"},
	{ActionScale, "change the built-in server's replica count, e.g. scale: {replicas: 1}"},
	{ActionExec, "run a command (your deploy), e.g. exec: {command: ./deploy.sh, timeout: 5m}"},
	{ActionWaitFor, "wait until the target is ready, e.g. wait_for: {url: https://staging.example.com/healthz, timeout: 2m}"},
}}

// faults decodes the fault list. groups are the decoded client groups;
// groupsOK says whether they decoded at all (if not, references to them are
// not checked, to avoid a cascade of errors).
func (d *decoder) faults(f *field, run runLength, groups []GroupSpec, groupsOK bool) []Fault {
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil
	}
	var known groupNames
	for _, g := range groups {
		known.add(g.Name)
	}
	var (
		out   = make([]Fault, 0, len(entries))
		names = map[string]ast.Node{}
		downs []placedFault
	)
	for i, e := range entries {
		path := fmt.Sprintf("%s[%d]", f.path, i)
		flt, at, ok := d.fault(e, path, i, run, &known, groupsOK)
		if prev, dup := names[flt.Name]; dup && flt.Name != "" {
			line, col := position(prev)
			d.errorf(at.name, path+".name", "duplicate fault name %q (first at %d:%d); give each fault its own name", flt.Name, line, col)
		} else if flt.Name != "" {
			names[flt.Name] = at.name
		}
		if ok && flt.Toxic == vocab.ToxicDown && run.known {
			placed := placedFault{flt, groupSet(flt.Groups)}
			d.checkDownOverlap(placed, at, path, run, &known, downs)
			downs = append(downs, placed)
		}
		out = append(out, flt)
	}
	return out
}

// faultNodes are where a fault's errors found after decoding are placed.
type faultNodes struct {
	name, at ast.Node
}

// placedFault is a down fault whose window is within the run.
type placedFault struct {
	Fault
	groups map[string]bool // nil: all groups
}

// groupNames are the defined groups, in order and as a set.
type groupNames struct {
	list []string
	set  map[string]bool
}

func (g *groupNames) add(name string) {
	if name == "" || g.set[name] {
		return
	}
	if g.set == nil {
		g.set = map[string]bool{}
	}
	g.set[name] = true
	g.list = append(g.list, name)
}

func groupSet(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

func (d *decoder) fault(e ast.Node, path string, index int, run runLength, known *groupNames, groupsOK bool) (Fault, faultNodes, bool) {
	m := d.mapping(e, path, &faultSchema)
	if kinds := actionKeys(m); len(kinds) > 0 {
		return d.action(m, e, kinds, index, run)
	}
	flt := Fault{Stream: StreamDownstream}
	nodes := faultNodes{name: e, at: e}
	ok := m.ok
	toxicOK := false
	tf := m.require("toxic")
	if tf != nil {
		nodes.name, nodes.at = tf.node, tf.node
		line, col := position(tf.node)
		flt.Where = fmt.Sprintf("%s:%d:%d", d.file, line, col)
		if s, isStr := d.str(tf); isStr {
			flt.Toxic = s
			toxicOK = true
		}
	}
	if nf := m.field("name"); nf != nil {
		nodes.name = nf.node
		flt.Name, _ = d.name(nf)
	} else if flt.Toxic != "" {
		flt.Name = fmt.Sprintf("%s-%d", flt.Toxic, index)
	}
	flt.Stream = m.oneOf("stream", streams)
	attrs, attrKeys, attrsOK := d.attributes(m.field("attributes"))
	flt.Attributes = attrs
	if toxicOK && attrsOK {
		d.validateToxic(tf, m, flt, attrKeys)
	}
	ok = ok && toxicOK && attrsOK
	flt.Groups = d.faultGroups(m.field("groups"), known, groupsOK)

	at := m.field("at")
	if at != nil {
		nodes.at = at.node
	}
	reported := len(d.errs)
	flt.At = m.durationAtLeast("at", 0, 0, false)
	flt.For = m.durationAtLeast("for", 0, 0, false)
	ok = ok && len(d.errs) == reported // a broken window is not checked for overlaps
	if run.known && len(d.errs) == reported {
		ok = d.checkWindow(m, flt, run) && ok
	}
	return flt, nodes, ok
}

// attributes reads the attribute mapping as plain values: integers as int64,
// other numbers as float64, strings, booleans, nil. vocab.ValidateToxic
// judges them.
func (d *decoder) attributes(f *field) (map[string]any, map[string]ast.Node, bool) {
	attrs := map[string]any{}
	keys := map[string]ast.Node{}
	if f == nil {
		return attrs, keys, true
	}
	v, isMap := f.node.(*ast.MappingNode)
	if !isMap {
		d.errorf(f.node, f.path, "must be a mapping of attribute names to numbers, got %s; %s", describe(f.node), f.hint)
		return attrs, keys, false
	}
	ok := true
	for i, mv := range v.Values {
		if i >= maxMappingLen {
			d.errorf(mv, f.path, "has more than %d keys; remove the extra keys", maxMappingLen)
			return attrs, keys, false
		}
		if isNil(mv) || isNil(mv.Key) {
			continue
		}
		if mv.Key.IsMergeKey() {
			d.errorf(mv.Key, f.path, "<< is not supported in attributes; write the attributes out")
			ok = false
			continue
		}
		k, kok := d.resolve(mv.Key)
		if !kok {
			ok = false
			continue
		}
		name, isScalar := keyName(k)
		if !isScalar {
			d.errorf(mv, f.path, "a key must be a plain word, got %s; write attributes as \"name: value\"", describe(k))
			ok = false
			continue
		}
		path := f.path + "." + name
		if prev, dup := keys[name]; dup {
			line, col := position(prev)
			d.errorf(mv.Key, path, "duplicate attribute %q (first at %d:%d); remove one of them", name, line, col)
			ok = false
			continue
		}
		keys[name] = mv.Key
		val, vok := d.resolve(mv.Value)
		if !vok {
			ok = false
			continue
		}
		switch x := val.(type) {
		case nil, *ast.NullNode:
			attrs[name] = nil
		case *ast.IntegerNode:
			attrs[name] = intValue(x.Value)
		case *ast.FloatNode:
			attrs[name] = x.Value
		case *ast.InfinityNode:
			attrs[name] = x.Value
		case *ast.NanNode:
			attrs[name] = math.NaN()
		case *ast.BoolNode:
			attrs[name] = x.Value
		case *ast.StringNode:
			attrs[name] = x.Value
		default:
			d.errorf(mv.Value, path, "must be a number, got %s; write a plain value, e.g. %s: 100", describe(val), name)
			ok = false
		}
	}
	return attrs, keys, ok
}

func intValue(v any) any {
	if u, isUint := v.(uint64); isUint && u <= math.MaxInt64 {
		return int64(u)
	}
	return v
}

// validateToxic asks the faults package whether the toxic and its attributes
// are valid, and places its answer: an unknown toxic at the toxic's value, a
// bad attribute at the attribute's key (or, when it is missing, at the
// attributes key or the toxic).
func (d *decoder) validateToxic(tf *field, m *mapping, flt Fault, keys map[string]ast.Node) {
	err := vocab.ValidateToxic(flt.Toxic, flt.Attributes)
	if err == nil {
		return
	}
	var unknown *vocab.UnknownToxicError
	var attr *vocab.ToxicAttrError
	switch {
	case errors.As(err, &unknown):
		types := vocab.Toxics()
		d.errorf(tf.node, tf.path, "unknown toxic %q; %suse one of %s", flt.Toxic, gate.DidYouMean(flt.Toxic, types), strings.Join(types, ", "))
	case errors.As(err, &attr):
		at, msg := tf.node, attr.Msg
		if k, present := keys[attr.Attr]; present {
			at = k
		} else {
			if e := m.entries["attributes"]; e != nil {
				at = e.key
			}
			if !strings.Contains(msg, "; ") {
				msg += "; add it under attributes"
			}
		}
		d.errorf(at, m.sub("attributes."+attr.Attr), "%s", msg)
	default:
		d.errorf(tf.node, tf.path, "%v", err)
	}
}

func (d *decoder) faultGroups(f *field, known *groupNames, groupsOK bool) []string {
	if f == nil {
		return nil
	}
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i, e := range entries {
		v, ok := d.resolve(e)
		if !ok {
			continue
		}
		gf := &field{path: fmt.Sprintf("%s[%d]", f.path, i), node: v, hint: "name a group defined under groups"}
		name, ok := d.str(gf)
		if !ok {
			continue
		}
		switch {
		case seen[name]:
			d.errorf(v, gf.path, "group %q is listed twice; remove one", name)
			continue
		case groupsOK && !known.set[name] && d.once(v, "group"):
			d.errorf(v, gf.path, "unknown group %q; %sname one of the groups: %s", name, gate.DidYouMean(name, known.list), strings.Join(known.list, ", "))
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// checkWindow checks that the fault's window lies within the run.
func (d *decoder) checkWindow(m *mapping, flt Fault, run runLength) bool {
	at, forF := m.field("at"), m.field("for")
	switch {
	case at != nil && flt.At >= run.d:
		d.errorf(at.node, at.path, "%s is at or after the end of the run (%s), so the fault would never act; start it earlier or lengthen the phases",
			fmtDur(flt.At), fmtDur(run.d))
	case forF != nil && flt.For > 0 && flt.At+flt.For > run.d:
		d.errorf(forF.node, forF.path, "the fault would end at %s (at %s + for %s), after the run ends at %s; shorten for to at most %s, or leave it out to last until the end",
			fmtDur(flt.At+flt.For), fmtDur(flt.At), fmtDur(flt.For), fmtDur(run.d), fmtDur(run.d-flt.At))
	default:
		return true
	}
	return false
}

// checkDownOverlap rejects two down faults on the same proxy at the same
// time: the end of the first would bring the proxy back while the second
// still means it to be down.
func (d *decoder) checkDownOverlap(flt placedFault, nodes faultNodes, path string, run runLength, known *groupNames, downs []placedFault) {
	for _, prev := range downs {
		if flt.At >= prev.Until(run.d) || prev.At >= flt.Until(run.d) {
			continue
		}
		if g, shared := sharedGroup(flt, prev, known); shared {
			d.errorf(nodes.at, path+".at", "overlaps down fault %q (%s to %s) on group %q; a proxy can only be down once at a time: move or shorten one of them",
				prev.Name, fmtDur(prev.At), fmtDur(prev.Until(run.d)), g)
			return
		}
	}
}

// sharedGroup finds a group both faults apply to, looking only through the
// shorter of their group lists.
func sharedGroup(a, b placedFault, known *groupNames) (string, bool) {
	switch {
	case a.groups == nil && b.groups == nil:
		return firstOf(known.list, nil, known)
	case a.groups == nil:
		return firstOf(b.Groups, nil, known)
	case b.groups == nil || len(a.Groups) <= len(b.Groups):
		return firstOf(a.Groups, b.groups, known)
	default:
		return firstOf(b.Groups, a.groups, known)
	}
}

// firstOf is the first defined group in names that is also in set (nil: any).
func firstOf(names []string, set map[string]bool, known *groupNames) (string, bool) {
	for _, n := range names {
		if known.set[n] && (set == nil || set[n]) {
			return n, true
		}
	}
	return "", false
}
