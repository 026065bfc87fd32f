package workloads

import (
	"encoding/json"
	"time"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Workload is a validated workload file: every default filled in, every
// duration resolved (including "ttl+DUR" phase durations), every reference
// checked. A Workload returned by this package is ready to be planned.
type Workload struct {
	Name, Description string
	Source            string // the file path, or "builtin:<name>"
	Hash              string // "sha256:<hex>" of the file bytes
	Target            Target
	Phases            []Phase // sequential, with resolved Start and Duration
	Groups            []GroupSpec
	Faults            []Fault
	Duration          time.Duration // sum of the phase durations: the planned run time
	// Toxiproxy is the URL of an external toxiproxy-server to create the groups' proxies
	// on, or "" for the Toxiproxy embedded in mcpchaos.
	Toxiproxy string
	// Thresholds are the pass/fail conditions on the run's results (thresholds.go).
	Thresholds []gate.Threshold
	// SteadyState is the steady-state hypothesis (steady.go); nil when the workload has none.
	SteadyState *SteadyState
	// Rollbacks run at the end of every run, however it ended (rollback.go).
	Rollbacks []Rollback

	ttlOffsets []*time.Duration // per phase: the offset of a "ttl±DUR" duration, nil for a plain one
	decodedAs  string           // fingerprint of the values Parse returned (validate.go); "" for one built in Go
	// clientsWhere is file:line:col of each group's `clients`, as Parse read them: a fleet
	// too large for the processes it runs in is refused there (CheckClientsInProcesses).
	clientsWhere []string
}

// WaitsForTTL names the first phase that waits for the session TTL ("ttl±DUR"), "" when none
// does: such a workload needs a server that keeps sessions.
func (w *Workload) WaitsForTTL() string {
	for i, off := range w.ttlOffsets {
		if off != nil && i < len(w.Phases) {
			return w.Phases[i].Name
		}
	}
	return ""
}

// Target is the MCP server under test.
type Target struct {
	// Builtin is the built-in reference server, configured to a regime; nil
	// for a real server given by URL.
	Builtin *BuiltinTarget
	// URL is the MCP endpoint of a real server (http or https), when Builtin
	// is nil.
	URL string
	// SessionTTL is the declared session TTL (Builtin.SessionTTL, or a URL
	// target's session_ttl; 0 when a URL target declares none): what "ttl"
	// means in phase durations and what detection delays are measured (for
	// a URL target, estimated) against.
	SessionTTL time.Duration
	// NoSessionTTL says that the URL target declared session_ttl: none: its sessions never
	// expire by idling. "ttl" in a phase then counts 0, and no death is estimated.
	NoSessionTTL bool
	// TTLMode is how the session TTL counts (Builtin.TTLMode, or a URL target's ttl_mode):
	// vocab.TTLSliding ("" when not given) from the last request, vocab.TTLAbsolute from
	// initialize.
	TTLMode string

	// The rest applies to a URL target only.
	Headers            []Header // extra request headers, ${VAR} unexpanded
	CAFile             string   // PEM certificates to trust, "" for the system's
	InsecureSkipVerify bool     // accept any certificate (explicit opt-in)
	HTTP2              bool     // speak HTTP/2 instead of HTTP/1.1
	Where              string   // file:line:col of the url, for errors found when the run starts
}

// BuiltinTarget configures the reference server's regime: how long sessions
// live, how long the event log outlives them, whether GET validates the
// session, and how dead sessions and unknown cursors are answered.
type BuiltinTarget struct {
	SessionTTL          time.Duration // session_ttl: required, > 0
	Retention           time.Duration // retention: event-log retention; default 2×session_ttl
	RetentionEvents     int           // retention_events: events kept per log; default 1024
	GetValidation       string        // get_validation: GetPermissive (default) or GetStrict
	DeadStatus          int           // dead_status: status for a dead session; default 404
	DeadBody            string        // dead_body: body for a dead session; default {"error":"session expired"}
	UnknownCursorStatus int           // unknown_cursor_status: default 400; -1 = 200 with nothing replayed
	NotifyInterval      time.Duration // notify_interval: default 1s; 0 = no notifications
	Keepalive           time.Duration // keepalive: SSE comment interval; default 0 = off
	Retry               time.Duration // retry: SSE retry field; default 0 = not sent
	PostResponse        string        // post_response: "sse" (default) or "json"
	Replicas            int           // replicas: behind the embedded router; default 1
	Routing             string        // routing: "sticky" (default), "round-robin" or "hash"
	EventLog            string        // event_log: "per-replica" (default), "shared", or a redis:// URL
	MaxSessions         int           // max_sessions: sessions held at most, 503 beyond; default 0 = no cap
	Leak                bool          // leak: never reclaim a dead session (a leaking server); default false
	TTLMode             string        // ttl_mode: "" or "sliding" (default), or "absolute" (from initialize, however active)
	Era                 string        // era: vocab.EraBoth (default), EraSession or EraStateless: the protocol generations it speaks
}

// Phase is one step of the run's timeline. Phases run one after another.
type Phase struct {
	Name     string
	Start    time.Duration // offset from the start of the run
	Duration time.Duration // resolved; "ttl+1.5s" has become a plain duration
	Calls    bool          // clients make tool calls during this phase
}

// End is the offset from the run's start at which the phase ends.
func (p Phase) End() time.Duration { return p.Start + p.Duration }

// GroupSpec is what a workload says about one client group: a set of identical simulated
// clients sharing one fault proxy. (fleet.Fleet runs it; results.Group is its exported numbers.)
type GroupSpec struct {
	Name           string        // unique, [a-z0-9_-]+: it names a proxy and a result column
	Clients        int           // 1..100000
	Ramp           time.Duration // clients start evenly over this; default 0
	Policy         string        // what a client does after a drop: one of Policies()
	Retries        int           // retries of a failed tool call; default 3, 0..20
	RetryBackoff   time.Duration // pause before each retry; default 50ms
	Probe          string        // liveness probe method: "ping" (default) or "tools/list"
	DeadStatuses   []int         // statuses that mean "dead session"; default [404, 410]
	CallEvery      time.Duration // each client's tool-call period in phases with calls; default 1s
	Tool           string        // tool called: "echo" (default) or "slow"
	Concurrency    int           // concurrent request loops per client; default 2, 1..8
	RequestTimeout time.Duration // per-request timeout; default 10s
	Protocol       string        // MCP protocol version offered; default Protocols()[0]
	// Arguments are the tool call's arguments, with placeholders ({{client}}, {{seq}},
	// {{group}}); nil: the smallest instance of the tool's inputSchema.
	Arguments        map[string]any
	NoProgressTokens bool                       // progress_tokens: false; tool calls carry _meta.progressToken by default
	LogLevel         string                     // sent with logging/setLevel; "" = none
	Roots            []vocab.Root               // offered and answered to roots/list; nil = none
	ServerReplies    map[string]json.RawMessage // scripted results for sampling and elicitation
	// LibraryOptions are the options of the client library a library policy runs, checked
	// (vocab.CheckLibraryOption); nil when none are set.
	LibraryOptions map[string]any
	// ToolWhere and ArgumentsWhere are file:line:col of the group's `tool` and `arguments`
	// when the workload names them ("" when defaulted or set by a flag): a tool the server
	// does not offer, or arguments its schema refuses, are reported there when the run starts.
	ToolWhere, ArgumentsWhere string
	// Churn makes the group's clients come and go (churn.go); nil: each keeps its session.
	Churn *Churn
}

// Fault is a toxic (or a whole-proxy outage) applied to the proxies of some
// client groups during a window of the run.
type Fault struct {
	Name       string         // unique; default "<toxic>-<index>"
	Toxic      string         // one of vocab.Toxics()
	Stream     string         // "downstream" (default) or "upstream"
	Attributes map[string]any // toxic attributes, as checked by vocab.ValidateToxic
	Groups     []string       // groups whose proxy gets the fault; empty = all groups
	At         time.Duration  // offset from the start of the run
	For        time.Duration  // window length; 0 = until the end of the run
	Where      string         // file:line:col of the fault's toxic, for errors found when the run starts
	// Action, when set, makes this entry a non-network fault (restart, rebalance, scale,
	// exec, wait_for; see action.go) instead of a toxic: Toxic, Stream, Attributes, Groups and
	// For are then unset.
	Action *Action
}

// Until is the offset at which the fault is removed, for a run that lasts
// runEnd: At+For, or runEnd when For is 0.
func (f Fault) Until(runEnd time.Duration) time.Duration {
	if f.For == 0 {
		return runEnd
	}
	return f.At + f.For
}

// AppliesTo reports whether the fault is applied to the named group's proxy.
func (f Fault) AppliesTo(group string) bool {
	if len(f.Groups) == 0 {
		return true
	}
	for _, g := range f.Groups {
		if g == group {
			return true
		}
	}
	return false
}

// The closed sets of values a workload may use. Each list lives here once;
// the first entry of a list with a default is that default.
const (
	PolicyNaive = vocab.NameNaive
	PolicyProbe = vocab.NameProbe
	PolicyGoSDK = vocab.ClientGoSDK // sessions of the official Go SDK's client

	GetPermissive = "permissive"
	GetStrict     = "strict"

	StreamDownstream = "downstream"
	StreamUpstream   = "upstream"
)

var (
	policies      = vocab.Policies() // the names are defined once, in vocab
	probes        = vocab.ProbeMethods()
	tools         = vocab.ReferenceTools()
	protocols     = append(vocab.Protocols(), vocab.ProtocolStateless) // the last: a server's stateless revision
	getValidation = []string{GetPermissive, GetStrict}
	ttlModes      = vocab.TTLModes()
	eras          = vocab.Eras()
	postResponses = []string{"sse", "json"}
	streams       = []string{StreamDownstream, StreamUpstream}
)

// Policies lists the client policies a group may name.
func Policies() []string { return clone(policies) }

// Probes lists the probe methods a group may name; the first is the default.
func Probes() []string { return clone(probes) }

// Tools lists the tools a group may call; the first is the default.
func Tools() []string { return clone(tools) }

// Protocols lists the MCP protocol versions a group may offer; the first is
// the default.
func Protocols() []string { return clone(protocols) }

func clone(s []string) []string { return append([]string(nil), s...) }

// Defaults and limits, in one place.
const (
	defaultRetentionEvents     = 1024
	defaultDeadStatus          = 404
	defaultDeadBody            = `{"error":"session expired"}`
	defaultUnknownCursorStatus = 400
	defaultNotifyInterval      = time.Second

	defaultRetries        = 3
	defaultRetryBackoff   = 50 * time.Millisecond
	defaultCallEvery      = time.Second
	defaultConcurrency    = 2
	defaultRequestTimeout = 10 * time.Second

	maxClients         = 100000
	maxRetries         = 20
	maxConcurrency     = 8
	maxRetentionEvents = 1_000_000
	maxNameLen         = 63
	maxReplicas        = 64
	maxMaxSessions     = 10_000_000

	// maxDuration bounds every duration and the whole run (30 days), so
	// that sums of durations cannot overflow.
	maxDuration = 30 * 24 * time.Hour

	// Bounds on list and mapping sizes keep a hostile file (aliases of
	// aliases) from making validation take forever.
	maxListLen    = 1000
	maxStatuses   = 100
	maxMappingLen = 1000
)

var defaultDeadStatuses = []int{404, 410}
