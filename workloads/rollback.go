package workloads

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// The rollbacks section: actions that run at the end of every run, however it ended (planned
// end, failure, a threshold's abort, Ctrl-C or SIGTERM), to put the system back as it was:
// Chaos Toolkit's rollbacks. They are the faults' own action types (exec, wait_for) plus
// remove_faults, which takes the run's toxics off its proxies (what the schedule does at the
// end anyway, asked again for a proxy server that did not answer then).

// ActionRemoveFaults is the rollback that removes toxics from the run's proxies.
const ActionRemoveFaults = "remove_faults"

var rollbackKinds = []string{ActionExec, ActionWaitFor, ActionRemoveFaults}

// Rollback is one entry of rollbacks. Action is an exec (with an optional wait_for), a
// wait_for, or a remove_faults; Faults names the toxics remove_faults removes (nil: all).
type Rollback struct {
	Name   string
	Action *Action
	Faults []string // remove_faults: the faults to remove; nil for every toxic of the run
	Where  string   // file:line:col
}

var rollbackSchema = schema{keys: []schemaKey{
	{"name", "name the rollback with lowercase letters, digits, - and _, e.g. name: undo-deploy"},
	{ActionExec, "run a command that undoes a change, e.g. exec: {command: ./rollback.sh, timeout: 2m}"},
	{ActionWaitFor, "wait until the target is ready again, e.g. wait_for: {url: https://staging.example.com/healthz, timeout: 2m}"},
	{ActionRemoveFaults, "take the run's toxics off its proxies: remove_faults: {} for all, or remove_faults: {faults: [lb-idle-timeout]}"},
}}

var removeFaultsSchema = schema{keys: []schemaKey{
	{"faults", "list the toxic faults to remove, e.g. faults: [lb-idle-timeout]; leave it out for all"},
}}

const maxRollbacks = 100

// rollbacks decodes the rollbacks list.
func (d *decoder) rollbacks(f *field, faults []Fault, faultsOK bool) []Rollback {
	entries, ok := d.list(f, maxRollbacks)
	if !ok {
		return nil
	}
	out := make([]Rollback, 0, len(entries))
	names := map[string]ast.Node{}
	for i, e := range entries {
		path := fmt.Sprintf("%s[%d]", f.path, i)
		rb, at := d.rollback(e, path, i, faults, faultsOK)
		if prev, dup := names[rb.Name]; dup && rb.Name != "" {
			line, col := position(prev)
			d.errorf(at, path+".name", "duplicate rollback name %q (first at %d:%d); give each rollback its own name", rb.Name, line, col)
		} else if rb.Name != "" {
			names[rb.Name] = at
		}
		out = append(out, rb)
	}
	return out
}

func (d *decoder) rollback(e ast.Node, path string, index int, faults []Fault, faultsOK bool) (Rollback, ast.Node) {
	m := d.mapping(e, path, &rollbackSchema)
	rb := Rollback{Where: d.where(e)}
	at := e
	var kinds []string
	for _, k := range rollbackKinds {
		if m.entries[k] != nil {
			kinds = append(kinds, k)
		}
	}
	kind := ""
	switch {
	case len(kinds) == 0:
		if m.ok {
			d.errorf(e, path, "says nothing to do; give one of exec, wait_for, remove_faults")
		}
	case len(kinds) == 2 && kinds[0] == ActionExec && kinds[1] == ActionWaitFor:
		kind = ActionExec
	case len(kinds) > 1:
		d.errorf(m.entries[kinds[1]].key, m.sub(kinds[1]), "a rollback does one thing, and this one already says %s; put %s in a rollback of its own (only exec may carry a wait_for)", kinds[0], kinds[1])
	default:
		kind = kinds[0]
	}
	if nf := m.field("name"); nf != nil {
		at = nf.node
		rb.Name, _ = d.name(nf)
	} else if kind != "" {
		rb.Name = fmt.Sprintf("%s-%d", kind, index)
	}
	if kind == "" {
		return rb, at
	}
	a := &Action{Kind: kind}
	rb.Action = a
	switch kind {
	case ActionExec:
		d.exec(m.entries[kind], m.sub(kind), a)
	case ActionRemoveFaults:
		rb.Faults = d.removeFaults(m.entries[kind], m.sub(kind), faults, faultsOK)
	}
	if en := m.entries[ActionWaitFor]; en != nil {
		a.WaitFor = d.waitFor(en, m.sub(ActionWaitFor))
	}
	return rb, at
}

func (d *decoder) removeFaults(en *entry, path string, faults []Fault, faultsOK bool) []string {
	rm := d.mapping(en.value, path, &removeFaultsSchema)
	f := rm.field("faults")
	if f == nil {
		return nil
	}
	names := d.strings(f)
	var toxics []string
	for _, flt := range faults {
		if flt.Action == nil {
			toxics = append(toxics, flt.Name)
		}
	}
	entries, _ := d.list(f, maxArgs)
	for i, n := range names {
		if !faultsOK || slices.Contains(toxics, n) || i >= len(entries) {
			continue
		}
		at := entries[i]
		if len(toxics) == 0 {
			d.errorf(at, fmt.Sprintf("%s[%d]", f.path, i), "names fault %q, but the workload has no toxic faults to remove; remove this rollback", n)
			continue
		}
		d.errorf(at, fmt.Sprintf("%s[%d]", f.path, i), "names %q, which is not a toxic fault of this workload; use one of %s", n, strings.Join(toxics, ", "))
	}
	return names
}

// rollbacks is Validate's part for the rollbacks section.
func (v *validator) rollbacks(w *Workload) {
	if len(w.Rollbacks) > maxRollbacks {
		v.add("rollbacks", "has %d rollbacks, more than %d", len(w.Rollbacks), maxRollbacks)
		return
	}
	toxics := map[string]bool{}
	for _, f := range w.Faults {
		if f.Action == nil {
			toxics[f.Name] = true
		}
	}
	names := map[string]bool{}
	for i, rb := range w.Rollbacks {
		f := fmt.Sprintf("rollbacks[%d]", i)
		if !validName(rb.Name) || len(rb.Name) > maxNameLen {
			v.add(f+".name", "%q must be 1 to %d lowercase letters, digits, - and _", rb.Name, maxNameLen)
		} else if names[rb.Name] {
			v.add(f+".name", "duplicate rollback name %q", rb.Name)
		}
		names[rb.Name] = true
		if rb.Action == nil || !slices.Contains(rollbackKinds, rb.Action.Kind) {
			v.add(f, "needs an action: one of %s", strings.Join(rollbackKinds, ", "))
			continue
		}
		if rb.Action.Kind != ActionRemoveFaults {
			v.action(f, w, Fault{Name: rb.Name, Action: rb.Action})
		} else if rb.Action.WaitFor != nil {
			v.add(f+".wait_for", "goes with exec only; put it in a rollback of its own")
		}
		for j, n := range rb.Faults {
			if !toxics[n] {
				v.add(fmt.Sprintf("%s.%s.faults[%d]", f, ActionRemoveFaults, j), "names %q, which is not a toxic fault of this workload", n)
			}
		}
		if rb.Action.Kind != ActionRemoveFaults && rb.Faults != nil {
			v.add(f, "lists faults to remove, and is not a remove_faults")
		}
	}
}
