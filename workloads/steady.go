package workloads

import (
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// The steady_state section: probes of the system's own health (an HTTP endpoint, a command,
// a PromQL query), each judged against a tolerance before, after, continuously during, or
// during one fault of the run: Chaos Toolkit's steady-state hypothesis, with Litmus's probe
// kinds and modes. A probe outside its tolerance fails the run's gate; a before probe that
// fails means the system was not steady, and the run starts no fault. Package steady runs
// them and judges the tolerances; the checks here are the ones a file can get wrong.

// When a probe runs.
const (
	SteadyBefore       = "before"       // once, before the clients and faults start (Litmus SOT)
	SteadyAfter        = "after"        // once, after the clients stopped (EOT)
	SteadyContinuously = "continuously" // every `every`, from the start to the end (Continuous)
	SteadyDuring       = "during"       // every `every` while the fault named by `during` is in force (OnChaos)
)

var steadyWhens = []string{SteadyBefore, SteadyAfter, SteadyContinuously, SteadyDuring}

// SteadyState is the workload's steady-state hypothesis.
type SteadyState struct {
	Title  string
	Probes []SteadyProbe
}

// SteadyProbe is one probe: exactly one of HTTP, Command and PromQL is set.
type SteadyProbe struct {
	Name    string
	When    []string      // of SteadyBefore, SteadyAfter, SteadyContinuously, SteadyDuring
	Every   time.Duration // continuously and during: the pause between runs
	During  string        // during: the fault's name
	Timeout time.Duration // one run's bound
	// Retries is how many more attempts a run makes before it fails (Litmus's retry): an after
	// probe waiting for the server to settle, a flaky check. RetryInterval is the pause
	// between two attempts.
	Retries       int
	RetryInterval time.Duration
	Tolerance     string // vocab.ParseTolerance's language; "" when the check's own expectation decides
	HTTP          *HTTPProbe
	Command       *CommandProbe
	PromQL        *PromQLProbe
	Where         string // file:line:col of the probe, for what is found when the run starts
}

// Kind names the probe's kind: "http", "command" or "promql".
func (p SteadyProbe) Kind() string {
	switch {
	case p.HTTP != nil:
		return "http"
	case p.Command != nil:
		return "command"
	case p.PromQL != nil:
		return "promql"
	}
	return ""
}

// Runs says whether the probe runs at when.
func (p SteadyProbe) Runs(when string) bool { return contains(p.When, when) }

// HTTPProbe is a GET judged by its status, a substring of its body, or a number in its JSON
// body (JSONField, with the probe's tolerance). URL may start with {{target}}: the target's
// scheme://host:port (the built-in server's too), filled in when the run starts.
type HTTPProbe struct {
	URL          string
	Status       int // default 200
	BodyContains string
	JSONField    string // a dotted path to a number; needs the probe's tolerance
}

// CommandProbe is a program judged by its exit status, a substring of its output, or its
// output as a number (with the probe's tolerance).
type CommandProbe struct {
	Command        string
	Args           []string
	Env            []Header // ${VAR} unexpanded, as exec's
	ExitStatus     int
	OutputContains string
	MaxOutput      int // default 65536
}

// PromQLProbe is an instant query whose one sample the probe's tolerance judges.
type PromQLProbe struct {
	URL   string // the Prometheus server's base URL
	Query string
}

// TargetPlaceholder starts a probe URL that is relative to the target.
const TargetPlaceholder = "{{target}}"

const (
	defaultProbeEvery   = 2 * time.Second
	defaultProbeTimeout = vocab.DefaultProbeTimeout
	defaultRetryPause   = time.Second
	maxProbeRetries     = 100
	maxProbeTimeout     = 5 * time.Minute
	maxProbes           = 100
)

var steadySchema = schema{keys: []schemaKey{
	{"title", "say in a sentence what steady means, e.g. title: the server keeps answering and holds no leaked sessions"},
	{"probes", "list the probes, each with a name, when (before, after, continuously, during) and one of http, command, promql"},
}}

var probeSchema = schema{keys: []schemaKey{
	{"name", "name the probe with lowercase letters, digits, - and _, e.g. name: healthz"},
	{"when", "say when it runs: before, after, continuously or during, or a list of them, e.g. when: [before, after]"},
	{"every", "set the pause between two runs when it runs continuously or during a fault, e.g. every: 2s"},
	{"during", "name the fault during which it runs (with when: during), e.g. during: lb-idle-timeout"},
	{"timeout", "bound one run of the probe, e.g. timeout: 5s"},
	{"retries", "set how many more attempts a run makes before it fails, e.g. retries: 10 (an after probe waiting for the server to settle)"},
	{"retry_interval", "set the pause between two attempts, e.g. retry_interval: 1s"},
	{"tolerance", "say what value is steady, e.g. tolerance: value <= 5, or tolerance: within 10% of before"},
	{"http", "probe a URL, e.g. http: {url: \"{{target}}/healthz\", status: 200}"},
	{"command", "run a command, e.g. command: {command: ./check.sh, exit_status: 0}"},
	{"promql", "run an instant query, e.g. promql: {url: http://127.0.0.1:9090, query: sum(mcp_sessions_held)}"},
}}

var httpProbeSchema = schema{keys: []schemaKey{
	{"url", "give the URL to GET (loopback or the target's host), e.g. url: \"{{target}}/healthz\""},
	{"status", "set the status expected, e.g. status: 200"},
	{"body_contains", "give a string the body must contain, e.g. body_contains: ok"},
	{"json_field", "name a number in the JSON body by a dotted path, judged by the probe's tolerance, e.g. json_field: sessions.held"},
}}

var commandProbeSchema = schema{keys: []schemaKey{
	{"command", "give the program to run, e.g. command: ./check.sh"},
	{"args", "list its arguments, e.g. args: [--quick]"},
	{"env", "give extra environment variables, e.g. env: {TOKEN: \"${TOKEN}\"}"},
	{"exit_status", "set the exit status expected (default 0)"},
	{"output_contains", "give a string the output must contain"},
	{"max_output", "set how many bytes of its output are kept (default 65536)"},
}}

var promqlProbeSchema = schema{keys: []schemaKey{
	{"url", "give the Prometheus server's URL (loopback or the target's host), e.g. url: http://127.0.0.1:9090"},
	{"query", "give an instant query that returns one number, e.g. query: sum(process_resident_memory_bytes{job=\"mcp\"})"},
}}

var probeKinds = []string{"http", "command", "promql"}

// steadyState decodes the steady_state section; faults are the decoded faults (during names
// one), faultsOK says whether they decoded at all.
func (d *decoder) steadyState(f *field, t Target, faults []Fault, faultsOK bool) *SteadyState {
	m := d.mapping(f.node, f.path, &steadySchema)
	ss := &SteadyState{Title: m.str("title", "")}
	pf := m.require("probes")
	if pf == nil {
		return ss
	}
	entries, ok := d.list(pf, maxProbes)
	if !ok {
		return ss
	}
	if len(entries) == 0 {
		d.errorf(pf.node, pf.path, "is empty; %s", pf.hint)
	}
	names := map[string]ast.Node{}
	for i, e := range entries {
		p, at := d.probe(e, fmt.Sprintf("%s[%d]", pf.path, i), t, faults, faultsOK)
		if prev, dup := names[p.Name]; dup && p.Name != "" {
			line, col := position(prev)
			d.errorf(at, fmt.Sprintf("%s[%d].name", pf.path, i), "duplicate probe name %q (first at %d:%d); give each probe its own name", p.Name, line, col)
		} else if p.Name != "" {
			names[p.Name] = at
		}
		ss.Probes = append(ss.Probes, p)
	}
	return ss
}

func (d *decoder) probe(e ast.Node, path string, t Target, faults []Fault, faultsOK bool) (SteadyProbe, ast.Node) {
	m := d.mapping(e, path, &probeSchema)
	p := SteadyProbe{Where: d.where(e)}
	at := e
	if nf := m.require("name"); nf != nil {
		at = nf.node
		p.Name, _ = d.name(nf)
	}
	p.When = d.whens(m)
	p.Every = m.loopDuration("every", defaultProbeEvery, minProbeEvery, false)
	p.Timeout = m.durationAtLeast("timeout", defaultProbeTimeout, 0, true)
	if f := m.field("timeout"); f != nil && p.Timeout > maxProbeTimeout {
		d.errorf(f.node, f.path, "must be at most %s, got %s; a probe is a quick look, not a job", fmtDur(maxProbeTimeout), fmtDur(p.Timeout))
	}
	if f := m.field("every"); f != nil && len(p.When) > 0 && !p.Runs(SteadyContinuously) && !p.Runs(SteadyDuring) {
		d.errorf(f.key, f.path, "applies to a probe that runs continuously or during a fault, and this one runs only %s; remove every, or add continuously to when", strings.Join(p.When, " and "))
	}
	p.Retries = int(m.intIn("retries", 0, 0, maxProbeRetries))
	p.RetryInterval = m.loopDuration("retry_interval", defaultRetryPause, minRetryInterval, false)
	d.probeDuring(m, &p, faults, faultsOK)
	var kinds []string
	for _, k := range probeKinds {
		if m.entries[k] != nil {
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0 && m.ok:
		d.errorf(e, path, "says nothing to probe; give one of http, command, promql")
	case len(kinds) > 1:
		d.errorf(m.entries[kinds[1]].key, m.sub(kinds[1]), "a probe checks one thing, and this one already says %s; put %s in a probe of its own", kinds[0], kinds[1])
	case len(kinds) == 1:
		switch kinds[0] {
		case "http":
			p.HTTP = d.httpProbe(m.entries["http"], m.sub("http"), t)
		case "command":
			p.Command = d.commandProbe(m.entries["command"], m.sub("command"))
		case "promql":
			p.PromQL = d.promqlProbe(m.entries["promql"], m.sub("promql"), t)
		}
	}
	d.probeTolerance(m, &p)
	return p, at
}

// whens reads when: one value or a list of them.
func (d *decoder) whens(m *mapping) []string {
	f := m.require("when")
	if f == nil {
		return nil
	}
	var out []string
	add := func(ef *field) {
		if v, ok := d.oneOf(ef, steadyWhens); ok {
			if contains(out, v) {
				d.errorf(ef.node, ef.path, "%s is listed twice; list it once", v)
				return
			}
			out = append(out, v)
		}
	}
	if _, isList := f.node.(*ast.SequenceNode); !isList {
		add(f)
		return out
	}
	entries, ok := d.list(f, len(steadyWhens)*2)
	if !ok {
		return nil
	}
	for i, e := range entries {
		v, ok := d.resolve(e)
		if !ok {
			continue
		}
		add(&field{path: fmt.Sprintf("%s[%d]", f.path, i), node: v, hint: f.hint})
	}
	if len(entries) == 0 {
		d.errorf(f.node, f.path, "is empty; %s", f.hint)
	}
	return out
}

// probeDuring checks that during goes with when: during and names a fault of the run.
func (d *decoder) probeDuring(m *mapping, p *SteadyProbe, faults []Fault, faultsOK bool) {
	f := m.field("during")
	if f == nil {
		if p.Runs(SteadyDuring) && m.ok {
			d.errorf(m.entries["when"].key, m.sub("when"), "says during, but the probe names no fault; add during: FAULT-NAME")
		}
		return
	}
	name, ok := d.str(f)
	if !ok {
		return
	}
	p.During = name
	if !p.Runs(SteadyDuring) {
		d.errorf(f.key, f.path, "names a fault, but when does not say during; add during to when, or remove this")
		return
	}
	if !faultsOK {
		return
	}
	var names []string
	for _, flt := range faults {
		if flt.Name == name {
			return
		}
		names = append(names, flt.Name)
	}
	if len(names) == 0 {
		d.errorf(f.node, f.path, "names fault %q, but the workload has no faults; add it under faults, or run the probe continuously", name)
		return
	}
	d.errorf(f.node, f.path, "names fault %q, which this workload does not have; %suse one of %s", name, gate.DidYouMean(name, names), strings.Join(names, ", "))
}

func (d *decoder) probeTolerance(m *mapping, p *SteadyProbe) {
	f := m.field("tolerance")
	needs := p.PromQL != nil || p.HTTP != nil && p.HTTP.JSONField != ""
	if f == nil {
		if needs && m.ok {
			what := "a promql probe's value"
			if p.PromQL == nil {
				what = "an http probe's json_field"
			}
			d.errorf(m.node, m.sub("tolerance"), "missing: %s is judged by a tolerance; %s", what, m.s.hint("tolerance"))
		}
		return
	}
	s, ok := d.str(f)
	if !ok {
		return
	}
	tol, err := vocab.ParseTolerance(s)
	if err != nil {
		d.errorf(f.node, f.path, "%v", err)
		return
	}
	p.Tolerance = tol.String()
	switch {
	case p.HTTP != nil && p.HTTP.JSONField == "":
		d.errorf(f.key, f.path, "an http probe judges its status (status:) and body (body_contains:); a tolerance judges a number of its JSON body: add json_field, or remove the tolerance")
	case tol.NeedsBefore() && !p.Runs(SteadyBefore) && len(p.When) > 0:
		d.errorf(f.node, f.path, "compares with the probe's before value, but the probe does not run before; add before to when")
	}
}

func (d *decoder) httpProbe(en *entry, path string, t Target) *HTTPProbe {
	hm := d.mapping(en.value, path, &httpProbeSchema)
	hm.node = en.key
	h := &HTTPProbe{}
	if f := hm.require("url"); f != nil {
		if s, ok := d.str(f); ok {
			h.URL = s
			if msg := CheckProbeURL(s, t); msg != "" {
				d.errorf(f.node, f.path, "%s", msg)
			}
		}
	}
	h.Status = int(hm.intIn("status", 200, 100, 599))
	h.BodyContains = hm.str("body_contains", "")
	h.JSONField = hm.str("json_field", "")
	if f := hm.field("json_field"); f != nil && h.JSONField == "" {
		d.errorf(f.node, f.path, "is empty; %s", f.hint)
	}
	return h
}

func (d *decoder) commandProbe(en *entry, path string) *CommandProbe {
	cm := d.mapping(en.value, path, &commandProbeSchema)
	cm.node = en.key
	c := &CommandProbe{}
	if f := cm.require("command"); f != nil {
		if s, ok := d.str(f); ok {
			if strings.TrimSpace(s) == "" {
				d.errorf(f.node, f.path, "is empty; %s", f.hint)
			}
			c.Command = s
		}
	}
	c.Args = d.strings(cm.field("args"))
	c.Env = d.envVars(cm.field("env"))
	c.ExitStatus = int(cm.intIn("exit_status", 0, 0, 255))
	c.OutputContains = cm.str("output_contains", "")
	c.MaxOutput = int(cm.intIn("max_output", defaultMaxOutput, 1, maxMaxOutput))
	return c
}

func (d *decoder) promqlProbe(en *entry, path string, t Target) *PromQLProbe {
	pm := d.mapping(en.value, path, &promqlProbeSchema)
	pm.node = en.key
	p := &PromQLProbe{}
	if f := pm.require("url"); f != nil {
		if s, ok := d.str(f); ok {
			p.URL = s
			if msg := CheckProbeURL(s, t); msg != "" {
				d.errorf(f.node, f.path, "%s", msg)
			}
		}
	}
	if f := pm.require("query"); f != nil {
		if s, ok := d.str(f); ok {
			if strings.TrimSpace(s) == "" {
				d.errorf(f.node, f.path, "is empty; %s", f.hint)
			}
			p.Query = s
		}
	}
	return p
}
