package clients

import (
	"fmt"
	"slices"
	"strings"
)

// Verdict is what a client does with its session after a replay.
type Verdict int

const (
	// Resume: the session is live; apply the replayed events and carry on.
	Resume Verdict = iota
	// Teardown: the session is dead; quarantine the replayed events, drop cursor and session
	// id, re-initialize.
	Teardown
	// Resync: the cursor was refused but the session lives; events were lost. Open a fresh
	// stream without a cursor; do not re-initialize.
	Resync
	// Ambiguous: the statuses fit no rule; apply nothing, report an error, try again later.
	Ambiguous
)

var verdictNames = [...]string{"resume", "teardown", "resync", "ambiguous"}

func (v Verdict) String() string { return verdictNames[v] }

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
	AfterReplay(r Replay, probe func() ProbeResult) Verdict
	// AfterFailure decides what a failed attempt means.
	AfterFailure(f Failure) Action
	// SharesSession reports whether every request loop of a client always uses the client's
	// current session (true), or whether each loop keeps the session it started with until
	// its own failure tells it otherwise (false: the seed's stale coroutine).
	SharesSession() bool
}

// PolicyConfig holds the per-group settings a policy may use.
type PolicyConfig struct {
	Retries int // retries after a failed tool call, before surfacing it
}

var policies = map[string]func(PolicyConfig) Policy{
	"naive": func(c PolicyConfig) Policy { return Naive{Retries: c.Retries} },
	"probe": func(c PolicyConfig) Policy { return Probe{Retries: c.Retries} },
	"gosdk": func(PolicyConfig) Policy { return GoSDK{} },
}

// PolicyNames lists the registered policies.
func PolicyNames() []string {
	names := make([]string, 0, len(policies))
	for n := range policies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewPolicy returns the named policy.
func NewPolicy(name string, c PolicyConfig) (Policy, error) {
	mk, ok := policies[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(PolicyNames(), ", "))
	}
	return mk(c), nil
}
