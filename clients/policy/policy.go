package policy

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// ReplayDecision is what a client does with its session after a replay.
type ReplayDecision int

const (
	// Resume: the session is live; apply the replayed events and carry on.
	Resume ReplayDecision = iota
	// Teardown: the session is dead; quarantine the replayed events, drop cursor and session
	// id, re-initialize.
	Teardown
	// Resync: the cursor was refused but the session lives; events were lost. Open a fresh
	// stream without a cursor; do not re-initialize.
	Resync
	// Ambiguous: the statuses fit no rule; apply nothing, report an error, try again later.
	Ambiguous
)

var replayDecisionNames = [...]string{"resume", "teardown", "resync", "ambiguous"}

func (v ReplayDecision) String() string { return replayDecisionNames[v] }

// Replay is what the replay GET got.
type Replay struct {
	Status int  // HTTP status of the GET that carried Last-Event-ID
	Dead   bool // Status is one of the group's dead-session statuses
}

// ProbeResult is what a liveness probe got.
type ProbeResult struct {
	Status int   // HTTP status; 0 when the request failed
	Dead   bool  // Status is one of the group's dead-session statuses
	Err    error // transport or protocol failure
}

// Live reports whether the probe proved the session alive.
func (p ProbeResult) Live() bool { return p.Err == nil && p.Status/100 == 2 }

// Failure is one failed attempt of a session-scoped request made for the application (a tool
// call).
type Failure struct {
	Attempt int  // 1 for the first attempt
	Status  int  // HTTP status, 0 for a transport failure
	Dead    bool // Status is one of the group's dead-session statuses
	Err     error
}

// Action is what a client does after a failed attempt.
type Action int

const (
	Retry          Action = iota // try the same request again, after a backoff
	SurfaceFailure               // give up: report a tool failure to the application
	SessionDead                  // classify the session dead: teardown and re-initialize
)

// Policy decides what a client does after a drop and after a failed request. A policy is a
// small value; adding one touches one file and the registry below.
type Policy interface {
	Name() string
	// AfterReplay classifies a replay. probe sends one liveness probe when called; a policy
	// that never probes never calls it.
	AfterReplay(r Replay, probe func() ProbeResult) ReplayDecision
	// AfterFailure decides what a failed attempt means.
	AfterFailure(f Failure) Action
	// SharesSession reports whether every request loop of a client always uses the client's
	// current session (true), or whether each loop keeps the session it started with until
	// its own failure tells it otherwise (false: the seed's stale coroutine).
	SharesSession() bool
}

// Config holds the per-group settings a policy may use.
type Config struct {
	Retries int // retries after a failed tool call, before surfacing it
}

// The names a group's `policy` may take, and the client libraries, are the workload file's
// words (package vocab, which workloads checks against); the fleet reads them here.
const (
	NameNaive      = vocab.NameNaive
	NameProbe      = vocab.NameProbe
	ClientGoSDK    = vocab.ClientGoSDK
	ClientMCPGo    = vocab.ClientMCPGo
	ClientMCPGo16  = vocab.ClientMCPGo16
	ClientTSSDK    = vocab.ClientTSSDK
	ClientTSClient = vocab.ClientTSClient
)

// IsLibrary reports whether a group's policy names a client library.
func IsLibrary(kind string) bool { return vocab.IsLibrary(kind) }

// Number reads a numeric library option as JSON or YAML decoding holds it.
func Number(v any) (float64, bool) { return vocab.Number(v) }

// A policy takes from Config only what it uses: Config may grow, so no conversion (S1016).
var policies = map[string]func(Config) Policy{
	//lint:ignore S1016 see above
	NameNaive: func(c Config) Policy { return Naive{Retries: c.Retries} },
	//lint:ignore S1016 see above
	NameProbe: func(c Config) Policy { return Probe{Retries: c.Retries} },
}

// New returns the named policy. For ClientGoSDK it returns nil and no error: that group
// has no policy (the fleet then runs the Go SDK's client).
func New(name string, c Config) (Policy, error) {
	if IsLibrary(name) {
		return nil, nil
	}
	mk, ok := policies[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(vocab.Policies(), ", "))
	}
	return mk(c), nil
}
