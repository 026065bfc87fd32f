package workloads

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"

	"github.com/goccy/go-yaml/ast"
)

var groupSchema = schema{keys: []schemaKey{
	{"name", "name the group with lowercase letters, digits, - and _, e.g. name: naive"},
	{"clients", "set how many simulated clients this group runs"},
	{"ramp", "set the time over which the group's clients start, evenly spread, e.g. 30s (default 0s: all at once)"},
	{"policy", "set what a client does after a drop: " + strings.Join(policies, " or ")},
	{"retries", "set how many times a client retries a failed tool call (default 3)"},
	{"retry_backoff", "set the pause before each retry, e.g. 50ms"},
	{"probe", "set the request a probe sends: " + strings.Join(probes, " or ")},
	{"dead_statuses", "list the HTTP statuses that mean a dead session, e.g. [404, 410]"},
	{"call_every", "set each client's tool-call period during phases with calls: true, e.g. 1s"},
	{"tool", "set the tool clients call: " + strings.Join(tools, " or ") + " on the built-in server, any tool of a server given by url"},
	{"concurrency", "set how many request loops each client runs at once (default 2)"},
	{"request_timeout", "set how long a client waits for a response, e.g. 10s"},
	{"protocol", "set the MCP protocol version clients offer: " + strings.Join(protocols, ", ")},
	{"arguments", "set the tool call's arguments, e.g. arguments: {order_id: \"o-{{client}}-{{seq}}\", quantity: 1} (default: the smallest the tool's inputSchema accepts)"},
	{"progress_tokens", "set whether tool calls carry _meta.progressToken (default true)"},
	{"log_level", "set the level clients ask with logging/setLevel: " + strings.Join(vocab.LogLevels(), ", ") + " (default: none asked)"},
	{"roots", "list the roots clients offer and answer roots/list with, e.g. roots: [{uri: file:///srv/app, name: app}]"},
	{"library_options", "set options of the client library the policy runs (gosdk, mcpgo, ts-sdk, ts-client), e.g. library_options: {maxRetries: 10}"},
	{"server_replies", "script results for the server's sampling/createMessage and elicitation/create (refused with an error otherwise)"},
	{"churn", "make the clients come and go, e.g. churn: {every: 2s, abandon: 0.8, during: [churn]} (docs/workloads.md)"},
}}

func (d *decoder) groups(f *field, run runLength) []GroupSpec {
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil
	}
	if len(entries) == 0 {
		d.errorf(f.node, f.path, "is empty; %s", f.hint)
		return nil
	}
	groups := make([]GroupSpec, 0, len(entries))
	names := map[string]ast.Node{}
	total := 0
	for i, e := range entries {
		d.clientsWhere = d.clientsWhere[:i]
		g := d.group(e, fmt.Sprintf("%s[%d]", f.path, i), run, names)
		d.clientsWhere = append(d.clientsWhere, "")[:i+1] // "" where it has none
		groups = append(groups, g)
		if total <= MaxClients && total+g.Clients > MaxClients {
			d.errorf(e, fmt.Sprintf("%s[%d].clients", f.path, i), "brings the workload to %d clients, more than %d in all; %s",
				total+g.Clients, MaxClients, shardHint)
		}
		total += g.Clients
	}
	return groups
}

// MaxClients bounds a workload's clients over all its groups and shards, and
// MaxClientsPerProcess the part of them one process runs (each held session costs about
// three file descriptors and tens of kilobytes).
const (
	MaxClients           = 1_000_000
	MaxClientsPerProcess = 100_000
)

const shardHint = "run a large fleet as shards: --procs N on one machine, --shard INDEX/COUNT on several (docs/shards.md)"

// CheckClientsPerProcess tells whether one process can run w, the part of a fleet it is given
// (a shard's part, or the whole workload), within MaxClientsPerProcess.
func (w *Workload) CheckClientsPerProcess() error { return w.CheckClientsInProcesses(1) }

// CheckClientsInProcesses tells whether w split into n shards (run --procs n) gives each process
// at most MaxClientsPerProcess clients; shard 0 has the largest share. Refused, it names the
// smallest number of processes that would do, so that validate and run say the same.
func (w *Workload) CheckClientsInProcesses(n int) error {
	share := w.ClientsPerProcess
	if share(max(n, 1)) <= MaxClientsPerProcess {
		return nil
	}
	need := max(n, 1)
	for need < 1024 && share(need) > MaxClientsPerProcess {
		need++
	}
	where := "workload " + w.Name
	if at, i := w.clientsPast(n); at != "" { // the group that takes a process past the bound
		where = fmt.Sprintf("%s: groups[%d].clients", at, i)
	}
	if n <= 1 {
		return fmt.Errorf("%s: one process would run %d clients, more than %d; %s (here --procs %d or more)",
			where, share(1), MaxClientsPerProcess, shardHint, need)
	}
	return fmt.Errorf("%s: with --procs %d a process would run %d clients, more than %d; use --procs %d or more, or --shard INDEX/COUNT on several machines",
		where, n, share(n), MaxClientsPerProcess, need)
}

// clientsPast is the position of the `clients` of the first group that takes the largest of
// n shard processes past MaxClientsPerProcess, and its index; "" when it has none.
func (w *Workload) clientsPast(n int) (string, int) {
	n = max(n, 1)
	total := 0
	for i, g := range w.Groups {
		if total += (max(g.Clients, 0) + n - 1) / n; total > MaxClientsPerProcess {
			if len(w.clientsWhere) != len(w.Groups) { // groups changed in Go: no position
				return "", 0
			}
			return w.clientsWhere[i], i
		}
	}
	return "", 0
}

// ClientsPerProcess is how many clients the largest of n shard processes runs (shard 0: each
// group's clients split as evenly as they go, the remainder first).
func (w *Workload) ClientsPerProcess(n int) int {
	n = max(n, 1)
	total := 0
	for _, g := range w.Groups {
		total += (max(g.Clients, 0) + n - 1) / n
	}
	return total
}

// Clients is how many clients w runs, over all its groups: the one sum of a workload's groups.
func (w *Workload) Clients() int {
	total := 0
	for _, g := range w.Groups {
		total += max(g.Clients, 0)
	}
	return total
}

func (d *decoder) group(e ast.Node, path string, run runLength, names map[string]ast.Node) GroupSpec {
	m := d.mapping(e, path, &groupSchema)
	var g GroupSpec
	if nf := m.require("name"); nf != nil {
		if name, ok := d.name(nf); ok {
			g.Name = name
			if reservedGroupNames[name] {
				d.errorf(nf.node, nf.path, "%q is reserved: exports, compare and thresholds use it for their own rows; name the group otherwise", name)
			} else if prev, dup := names[name]; dup {
				line, col := position(prev)
				d.errorf(nf.node, nf.path, "duplicate group name %q (first at %d:%d); give each group its own name", name, line, col)
			} else {
				names[name] = nf.node
			}
		}
	}
	if cf := m.require("clients"); cf != nil {
		if v, ok := d.integer(cf); ok && d.checkRange(cf, v, 1, maxClients) {
			g.Clients = int(v)
			d.clientsWhere = append(d.clientsWhere, d.where(cf.node))
		}
	}
	g.Ramp = m.durationAtLeast("ramp", 0, 0, false)
	if rf := m.field("ramp"); rf != nil && run.known && g.Ramp > run.d {
		d.errorf(rf.node, rf.path, "%s is longer than the whole run (%s), so some clients would never start; shorten it", fmtDur(g.Ramp), fmtDur(run.d))
	}
	if pf := m.require("policy"); pf != nil {
		g.Policy, _ = d.oneOf(pf, policies)
	}
	g.Retries = int(m.intIn("retries", defaultRetries, 0, maxRetries))
	g.RetryBackoff = m.durationAtLeast("retry_backoff", defaultRetryBackoff, 0, false)
	g.Probe = m.oneOf("probe", probes)
	g.DeadStatuses = d.deadStatuses(m)
	g.CallEvery = m.loopDuration("call_every", defaultCallEvery, minCallEvery, false)
	if tf := m.field("tool"); tf != nil && d.urlTarget {
		if s, ok := d.str(tf); ok && s != "" {
			g.Tool, g.ToolWhere = s, d.where(tf.node)
		} else if ok {
			d.errorf(tf.node, tf.path, "is empty; name a tool the server offers")
		}
	} else {
		g.Tool = m.oneOf("tool", tools)
	}
	g.Concurrency = int(m.intIn("concurrency", defaultConcurrency, 1, maxConcurrency))
	g.RequestTimeout = m.durationAtLeast("request_timeout", defaultRequestTimeout, 0, true)
	g.Protocol = m.oneOf("protocol", protocols)
	g.Arguments = d.arguments(m)
	if af := m.field("arguments"); af != nil && g.Arguments != nil {
		g.ArgumentsWhere = d.where(af.node)
	}
	if pf := m.field("progress_tokens"); pf != nil {
		on, ok := d.boolean(pf)
		g.NoProgressTokens = ok && !on
	}
	if lf := m.field("log_level"); lf != nil {
		g.LogLevel, _ = d.oneOf(lf, vocab.LogLevels())
	}
	g.Roots = d.roots(m)
	g.ServerReplies = d.serverReplies(m)
	g.LibraryOptions = d.libraryOptions(m, g.Policy)
	g.Churn = d.churn(m, g.Policy) // churn.go
	return g
}

func (d *decoder) deadStatuses(m *mapping) []int {
	def := append([]int(nil), defaultDeadStatuses...)
	f := m.field("dead_statuses")
	if f == nil {
		return def
	}
	entries, ok := d.list(f, maxStatuses)
	if !ok {
		return def
	}
	if len(entries) == 0 {
		d.errorf(f.node, f.path, "is empty, so no failure would count as a dead session; %s", f.hint)
		return def
	}
	statuses := make([]int, 0, len(entries))
	seen := map[int64]bool{}
	for i, e := range entries {
		v, ok := d.resolve(e)
		if !ok {
			continue
		}
		sf := &field{path: fmt.Sprintf("%s[%d]", f.path, i), node: v, hint: "use an HTTP status between 100 and 599"}
		status, ok := d.integer(sf)
		if !ok || !d.checkRange(sf, status, 100, 599) {
			continue
		}
		if seen[status] {
			d.errorf(sf.node, sf.path, "%d is listed twice; remove one", status)
			continue
		}
		seen[status] = true
		statuses = append(statuses, int(status))
	}
	return statuses
}
