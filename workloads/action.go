package workloads

import (
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Actions are the faults that act on the system rather than on the network
// (see faults/action.go): an entry of faults names exactly one of these keys
// instead of toxic (exec may carry a wait_for of its own).
const (
	ActionRestart   = "restart"
	ActionRebalance = "rebalance"
	ActionScale     = "scale"
	ActionExec      = "exec"
	ActionWaitFor   = "wait_for"
)

var actionKinds = []string{ActionRestart, ActionRebalance, ActionScale, ActionExec, ActionWaitFor}

// topologyActions act on the built-in server's replicas and router.
var topologyActions = []string{ActionRestart, ActionRebalance, ActionScale}

// Action is a non-network fault of the schedule. It acts once, at its
// fault's At, and may take a while (a rolling restart, a deploy script).
type Action struct {
	Kind string // one of the Action* kinds

	Replica int           // restart: the replica to restart, or -1 for all of them in turn
	Delay   time.Duration // restart: between two replicas of a rolling restart
	Grace   time.Duration // restart: how long a replaced process drains before it exits
	Era     string        // restart: the era the new replicas speak ("": as before), a rolling upgrade

	Replicas int // scale: the replica count to reach

	Command   string        // exec: the program
	Args      []string      // exec: its arguments
	Env       []Header      // exec: extra environment, ${VAR} unexpanded (they may be secrets)
	Timeout   time.Duration // exec: default 5m; its process group is killed then
	MaxOutput int           // exec: bytes of output kept in the export; default 65536

	WaitFor *WaitFor // wait_for, alone or after an exec
}

// WaitFor is a readiness wait: a URL answering 2xx, or a command exiting 0.
type WaitFor struct {
	URL      string
	Command  []string
	Timeout  time.Duration
	Interval time.Duration
}

// ExpandEnv returns the exec action's environment as NAME=value with ${VAR}
// expanded from lookup, and the expanded values that came from variables
// (secrets to redact from the output).
func (a *Action) ExpandEnv(lookup func(string) (string, bool)) (env, secrets []string, err error) {
	total := 0
	for _, h := range a.Env {
		v, missing := expandVars(h.Value, lookup)
		if missing != "" {
			return nil, nil, fmt.Errorf("%s: exec.env.%s: ${%s} is not set in the environment; export it before the run", h.Where, h.Name, missing)
		}
		if total += len(v); total > MaxSecretBytes {
			return nil, nil, fmt.Errorf("%s: exec.env.%s: %s (as expanded from the environment)", h.Where, h.Name, overBudget("env", total))
		}
		if v != h.Value {
			secrets = append(secrets, v)
		}
		env = append(env, h.Name+"="+v)
	}
	return env, secrets, nil
}

var restartSchema = schema{keys: []schemaKey{
	{"replica", "name the replica to restart by number (from 0), or all for a rolling restart of every replica"},
	{"delay", "set the pause between two replicas of a rolling restart, e.g. delay: 2s"},
	{"grace", "set how long a replaced process drains (its streams cut, still logging) before it exits, e.g. grace: 30s"},
	{"era", "bring the restarted replicas up speaking another protocol era: both, session or stateless (a rolling upgrade, e.g. era: stateless)"},
}}

var rebalanceSchema = schema{}

var scaleSchema = schema{keys: []schemaKey{
	{"replicas", "set the number of replicas to scale to, e.g. replicas: 1"},
}}

var execSchema = schema{keys: []schemaKey{
	{"command", "give the program to run, e.g. command: ./deploy.sh or command: kubectl"},
	{"args", "list its arguments, e.g. args: [rollout, restart, deployment/mcp]"},
	{"env", "give extra environment variables, e.g. env: {DEPLOY_TOKEN: \"${DEPLOY_TOKEN}\"}"},
	{"timeout", "set how long it may run before its process group is killed, e.g. timeout: 5m"},
	{"max_output", "set how many bytes of its output the export keeps (default 65536)"},
}}

var waitForSchema = schema{keys: []schemaKey{
	{"url", "give a URL that answers 2xx once the target is ready, e.g. url: https://staging.example.com/healthz"},
	{"command", "give a command that exits 0 once the target is ready, as a list, e.g. command: [kubectl, rollout, status, deployment/mcp]"},
	{"timeout", "set how long to wait at most, e.g. timeout: 2m"},
	{"interval", "set the pause between two attempts, e.g. interval: 1s"},
}}

const (
	defaultExecTimeout  = 5 * time.Minute
	defaultMaxOutput    = 64 << 10
	maxMaxOutput        = 16 << 20
	defaultWaitTimeout  = 2 * time.Minute
	defaultWaitInterval = 500 * time.Millisecond
	maxArgs             = 1000
)

// actionKeys are the action keys an entry of faults has, in schema order.
func actionKeys(m *mapping) []string {
	var out []string
	for _, k := range actionKinds {
		if m.entries[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// action decodes an entry of faults that names an action instead of a toxic.
func (d *decoder) action(m *mapping, e ast.Node, kinds []string, index int, run runLength) (Fault, faultNodes, bool) {
	reported := len(d.errs)
	kind := kinds[0]
	if len(kinds) == 2 && kinds[0] == ActionExec && kinds[1] == ActionWaitFor {
		kind = ActionExec
	} else if len(kinds) > 1 {
		second := m.entries[kinds[1]]
		d.errorf(second.key, m.sub(kinds[1]), "an entry of faults does one thing, and this one already says %s; put %s in an entry of its own (only exec may carry a wait_for)", kinds[0], kinds[1])
	}
	key := m.entries[kind].key
	line, col := position(key)
	flt := Fault{Where: fmt.Sprintf("%s:%d:%d", d.file, line, col), Action: &Action{Kind: kind}}
	nodes := faultNodes{name: key, at: key}
	for _, k := range []string{"toxic", "stream", "attributes", "groups", "for"} {
		if en := m.entries[k]; en != nil {
			why := "it belongs to a toxic"
			if k == "for" {
				why = "an action happens once, at its at; it has no window"
			} else if k == "groups" {
				why = "an action acts on the server, not on the groups' proxies"
			}
			d.errorf(en.key, m.sub(k), "%s cannot go with %s: %s; remove it", k, kind, why)
		}
	}
	if nf := m.field("name"); nf != nil {
		nodes.name = nf.node
		flt.Name, _ = d.name(nf)
	} else {
		flt.Name = fmt.Sprintf("%s-%d", kind, index)
	}
	if d.urlTarget && contains(topologyActions, kind) {
		d.errorf(key, m.sub(kind), "%s acts on the built-in reference server's replicas; against a url target, drive your own deploy with exec (and wait_for)", kind)
	}
	a := flt.Action
	switch kind {
	case ActionRestart:
		d.restart(m.entries[kind], m.sub(kind), a)
	case ActionRebalance:
		d.mapping(m.entries[kind].value, m.sub(kind), &rebalanceSchema)
	case ActionScale:
		sm := d.mapping(m.entries[kind].value, m.sub(kind), &scaleSchema)
		if f := sm.require("replicas"); f != nil {
			a.Replicas = int(sm.intIn("replicas", 1, 1, maxReplicas))
		}
	case ActionExec:
		d.exec(m.entries[kind], m.sub(kind), a)
	}
	if en := m.entries[ActionWaitFor]; en != nil {
		a.WaitFor = d.waitFor(en, m.sub(ActionWaitFor))
	}
	if at := m.field("at"); at != nil {
		nodes.at = at.node
	}
	flt.At = m.durationAtLeast("at", 0, 0, false)
	if run.known && len(d.errs) == reported {
		d.checkWindow(m, flt, run)
	}
	return flt, nodes, len(d.errs) == reported
}

func (d *decoder) restart(en *entry, path string, a *Action) {
	rm := d.mapping(en.value, path, &restartSchema)
	a.Replica = -1
	if f := rm.field("replica"); f != nil {
		if s, isStr := f.node.(*ast.StringNode); isStr && s.Value == "all" {
			a.Replica = -1
		} else if v, ok := d.integer(f); ok && d.checkRange(f, v, 0, int64(max(d.replicas, 1)-1)) {
			a.Replica = int(v)
		}
	}
	a.Delay = rm.durationAtLeast("delay", 0, 0, false)
	a.Grace = rm.durationAtLeast("grace", 0, 0, false)
	if rm.field("era") != nil {
		a.Era = rm.oneOf("era", eras)
	}
}

func (d *decoder) exec(en *entry, path string, a *Action) {
	em := d.mapping(en.value, path, &execSchema)
	em.node = en.key // a missing key is reported at exec:
	if f := em.require("command"); f != nil {
		if s, ok := d.str(f); ok {
			if strings.TrimSpace(s) == "" {
				d.errorf(f.node, f.path, "is empty; %s", f.hint)
			}
			a.Command = s
		}
	}
	a.Args = d.strings(em.field("args"))
	a.Env = d.envVars(em.field("env"))
	a.Timeout = em.durationAtLeast("timeout", defaultExecTimeout, 0, true)
	a.MaxOutput = int(em.intIn("max_output", defaultMaxOutput, 1, maxMaxOutput))
}

func (d *decoder) waitFor(en *entry, path string) *WaitFor {
	wm := d.mapping(en.value, path, &waitForSchema)
	w := &WaitFor{}
	uf, cf := wm.field("url"), wm.field("command")
	switch {
	case uf != nil && cf != nil:
		d.errorf(cf.key, cf.path, "wait for a url or a command, not both; remove one of them")
	case uf != nil:
		if s, ok := d.str(uf); ok {
			if msg := CheckURL(s); msg != "" {
				d.errorf(uf.node, uf.path, "%s", msg)
			}
			w.URL = s
		}
	case cf != nil:
		w.Command = d.strings(cf)
		if len(w.Command) == 0 {
			d.errorf(cf.node, cf.path, "is empty; %s", cf.hint)
		}
	case wm.ok:
		d.errorf(en.key, path, "says neither what to wait for; give a url (answering 2xx when ready) or a command (exiting 0 when ready)")
	}
	w.Timeout = wm.durationAtLeast("timeout", defaultWaitTimeout, 0, true)
	w.Interval = wm.loopDuration("interval", defaultWaitInterval, minRetryInterval, false)
	return w
}

// envVars reads an exec action's environment: NAME: value, values as
// strings with ${VAR} references checked (expanded when the run starts).
func (d *decoder) envVars(f *field) []Header {
	return d.nameValues(f, nameValues{
		mappingOf: "variable names",
		what:      "variable",
		name: func(mv *ast.MappingValueNode, name string, isScalar bool, path string) (string, bool) {
			if !isScalar || !validVarName(name) {
				d.errorf(mv.Key, path, "%q is not an environment variable name; rename it with letters, digits and _, not starting with a digit", name)
				return "", false
			}
			return name, true
		},
		valueHint: "write the value as a string, e.g. \"${DEPLOY_TOKEN}\"",
		forbidden: "\x00",
		why:       "a variable's value cannot contain a NUL byte",
	})
}

// strings reads a list of strings.
func (d *decoder) strings(f *field) []string {
	if f == nil {
		return nil
	}
	entries, ok := d.list(f, maxArgs)
	if !ok {
		return nil
	}
	var out []string
	for i, e := range entries {
		v, ok := d.resolve(e)
		if !ok {
			continue
		}
		ef := &field{path: fmt.Sprintf("%s[%d]", f.path, i), node: v, hint: f.hint}
		switch x := v.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			out = append(out, nodeText(x)) // an argument written as 3 means "3"
			continue
		}
		if s, ok := d.str(ef); ok {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
