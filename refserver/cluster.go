package refserver

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Routing rules of a Cluster's router.
const (
	RouteSticky     = "sticky"      // a session stays on the replica it was pinned to (the default)
	RouteRoundRobin = "round-robin" // every request to the next replica: no affinity at all
	RouteHash       = "hash"        // like sticky, but a lost pin is re-made by a hash of Mcp-Session-Id, and a scale moves sessions
)

// Event-log placements of a Cluster.
const (
	LogPerReplica = "per-replica" // each replica's log dies with it (the default)
	LogShared     = "shared"      // one in-memory log every replica reads and writes
	// Any redis:// or rediss:// URL: a Redis Streams log every replica writes through to and
	// replays from, outliving every replica.
)

// Topology is the shape of a Cluster: how many replicas, how requests reach
// them, where the event log lives.
type Topology struct {
	Replicas int    // 0 means 1
	Routing  string // RouteSticky (default), RouteRoundRobin or RouteHash
	EventLog string // LogPerReplica (default), LogShared, or a redis:// URL
}

// IsRedis says whether the event log is a Redis URL.
func (t Topology) IsRedis() bool {
	return strings.HasPrefix(t.EventLog, "redis://") || strings.HasPrefix(t.EventLog, "rediss://")
}

func (t Topology) withDefaults() Topology {
	if t.Replicas == 0 {
		t.Replicas = 1
	}
	if t.Routing == "" {
		t.Routing = RouteSticky
	}
	if t.EventLog == "" {
		t.EventLog = LogPerReplica
	}
	return t
}

// Validate reports what a Cluster cannot honour.
func (t Topology) Validate() error {
	t = t.withDefaults()
	var errs []error
	if t.Replicas < 1 || t.Replicas > maxReplicas {
		errs = append(errs, fmt.Errorf("replicas %d: want 1 to %d", t.Replicas, maxReplicas))
	}
	if t.Routing != RouteSticky && t.Routing != RouteRoundRobin && t.Routing != RouteHash {
		errs = append(errs, fmt.Errorf("routing %q: want %s, %s or %s", t.Routing, RouteSticky, RouteRoundRobin, RouteHash))
	}
	if t.EventLog != LogPerReplica && t.EventLog != LogShared && !t.IsRedis() {
		errs = append(errs, fmt.Errorf("event log %q: want %s, %s or a redis:// URL", t.EventLog, LogPerReplica, LogShared))
	}
	return errors.Join(errs...)
}

// maxReplicas bounds a cluster: each replica is a Server with its own ticker.
const maxReplicas = 64

// Cluster is the reference server as production runs it: replicas, each with
// its own in-memory session store, behind an embedded router that is sticky
// on Mcp-Session-Id (or not, by its rule), with the event log per replica or
// shared. It is an http.Handler.
//
// It can be restarted (one replica, or all in turn: a rolling deploy),
// rebalanced (the router forgets its affinities) and scaled, and it keeps the
// exact truth of every session's death: when, why, on which replica, by which
// fault. A session whose request the router sends to a replica other than the
// one holding it is dead from that moment (that replica answers 404, or, with
// a shared log and a permissive GET, replays it with 200: the seed's trap);
// its holder ends it so the truth stays single.
//
// The router takes one mutex per request for a map lookup: fine for a test
// fixture at the scale of the demo and the real-scale workloads, and it keeps
// routing decisions and deaths consistent with each other.
type Cluster struct {
	cfg    Config
	topo   Topology
	shared *logStore   // LogShared: the one log store; nil otherwise
	lim    *logLimits  // one event-id counter for the whole cluster
	execs  *executions // one count of tool calls run: a re-issue may reach another replica
	mirror *redisLog   // a Redis event log, or nil
	// wrongEra counts the replicas' answers to requests of a generation they do not speak
	// (era.go), whichever replica gave them.
	wrongEra atomic.Int64

	mu       sync.Mutex
	replicas []*replica // by slot; nil: removed by a scale-down
	owners   map[string]owner
	pins     map[string]int // sticky: session id → slot
	deaths   map[string]Death
	next     int       // round-robin cursor
	seed     uint64    // hash rule: changed by a rebalance
	lostBy   string    // the fault that last cost the router its affinities
	lostWhy  string    // its cause: CauseRebalance or CauseScale
	draining []*Server // replaced processes still draining: Close ends them
	closed   bool
}

type replica struct {
	srv *Server
	gen int // restarts so far
}

// owner is where a session was created: the slot and the replica's generation.
type owner struct{ slot, gen int }

// NewCluster starts a cluster (and its replicas' tickers); Close stops it. A
// Redis event log is connected (and pinged) here.
func NewCluster(cfg Config, topo Topology) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := topo.Validate(); err != nil {
		return nil, fmt.Errorf("target topology: %w", err)
	}
	cfg, topo = cfg.WithDefaults(), topo.withDefaults()
	c := &Cluster{
		cfg: cfg, topo: topo,
		lim:    &logLimits{max: cfg.RetentionEvents, retention: int64(cfg.Retention)},
		execs:  newExecutions(),
		owners: make(map[string]owner), pins: make(map[string]int), deaths: make(map[string]Death),
	}
	switch {
	case topo.EventLog == LogShared:
		c.shared = newLogStore()
	case topo.IsRedis():
		m, err := openRedisLog(topo.EventLog, cfg.RetentionEvents, cfg.Retention)
		if err != nil {
			return nil, err
		}
		c.mirror, c.lim.mirror = m, m
	}
	for range topo.Replicas {
		c.replicas = append(c.replicas, &replica{srv: c.newReplica()})
	}
	return c, nil
}

func (c *Cluster) newReplica() *Server { return c.newReplicaAs("") }

// newReplicaAs is a new replica speaking era ("": the cluster's Config.Era).
func (c *Cluster) newReplicaAs(era string) *Server {
	logs := c.shared
	if logs == nil {
		logs = newLogStore()
	}
	cfg := c.cfg
	if era != "" {
		cfg.Era = era
	}
	s := newServer(cfg, logs, c.lim, c.execs)
	s.wrongEra = &c.wrongEra // counted across restarts: a replica's answers outlive it
	return s
}

// RunTwice says which tool calls the cluster ran more than once, on any replicas.
func (c *Cluster) RunTwice() RunTwice { return c.execs.runTwice() }

// Topology returns the cluster's shape as configured, defaults filled in.
func (c *Cluster) Topology() Topology { return c.topo }

// ServeHTTP routes the request to a replica by the routing rule.
func (c *Cluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	c.mu.Lock()
	if len(c.live()) == 0 {
		c.mu.Unlock()
		http.Error(w, "no replica", http.StatusServiceUnavailable)
		return
	}
	if sid == "" { // initialize (or a request the replica will refuse)
		slot := c.pickLocked()
		rep := c.replicas[slot]
		c.mu.Unlock()
		rep.srv.ServeHTTP(&pinWriter{ResponseWriter: w, pin: func(id string) { c.pin(id, slot, rep.gen) }}, r)
		return
	}
	slot := c.routeLocked(sid)
	srv := c.replicas[slot].srv
	c.misroutedLocked(sid, slot)
	c.mu.Unlock()
	srv.ServeHTTP(w, r)
}

// live lists the slots of the replicas that exist. Called with c.mu held.
func (c *Cluster) live() []int {
	var out []int
	for i, r := range c.replicas {
		if r != nil {
			out = append(out, i)
		}
	}
	return out
}

// pickLocked is the next live replica in turn.
func (c *Cluster) pickLocked() int {
	live := c.live()
	c.next++
	return live[c.next%len(live)]
}

// routeLocked picks the replica for a request of session sid. Sticky and hash
// routing keep a session where it was pinned while its replica exists; an
// unpinned session (its affinity lost, its replica gone) is pinned anew: in
// turn (sticky) or by a hash of its id over the live replicas (hash, whose
// pins a scale also resets, as a hash ring moves keys when it changes).
func (c *Cluster) routeLocked(sid string) int {
	if c.topo.Routing == RouteRoundRobin {
		return c.pickLocked()
	}
	if slot, ok := c.pins[sid]; ok && c.replicas[slot] != nil {
		return slot
	}
	var slot int
	if c.topo.Routing == RouteHash {
		live := c.live()
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", c.seed, sid)
		slot = live[h.Sum64()%uint64(len(live))]
	} else {
		slot = c.pickLocked()
	}
	c.pins[sid] = slot
	return slot
}

// pin records the replica that created a session, as soon as the replica
// names it (before the client can send another request).
func (c *Cluster) pin(sid string, slot, gen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.owners[sid] = owner{slot, gen}
	if c.topo.Routing != RouteRoundRobin {
		c.pins[sid] = slot
	}
}

// misroutedLocked records the death of a live session whose request goes to
// a replica other than the one holding it, and ends it there.
func (c *Cluster) misroutedLocked(sid string, slot int) {
	o, known := c.owners[sid]
	if !known || o.slot == slot {
		return
	}
	if _, dead := c.deaths[sid]; dead {
		return
	}
	holder := c.replicas[o.slot]
	if holder == nil || holder.gen != o.gen {
		return // its replica is gone or restarted: that death is recorded already
	}
	key, _ := parseSessionKey(sid)
	now := holder.srv.now()
	cause, fault := c.lostWhy, c.lostBy
	if cause == "" {
		cause = CauseRebalance // round-robin routing needs no fault to lose a session
	}
	if holder.srv.orphan(key, now, cause) {
		c.deaths[sid] = Death{At: time.Unix(0, now), Cause: cause, Fault: fault, Replica: o.slot}
	}
}

// Death says how a session died, if it is dead: exactly, with its replica
// and the fault that killed it.
func (c *Cluster) Death(sid string) (Death, bool) {
	c.mu.Lock()
	d, recorded := c.deaths[sid]
	o, known := c.owners[sid]
	var holder *Server
	if known && c.replicas[o.slot] != nil && c.replicas[o.slot].gen == o.gen {
		holder = c.replicas[o.slot].srv
	}
	c.mu.Unlock()
	if recorded {
		return d, true
	}
	if holder == nil {
		return Death{}, false
	}
	d, dead := holder.Death(sid)
	d.Replica = o.slot
	return d, dead
}

// DeathTime is when the session died; the run's truth about deaths.
func (c *Cluster) DeathTime(sid string) (time.Time, bool) {
	d, dead := c.Death(sid)
	return d.At, dead
}

// Deaths counts the sessions that died so far, by cause, fault and replica.
func (c *Cluster) Deaths() []DeathCount {
	c.mu.Lock()
	ids := make([]string, 0, len(c.owners))
	for id := range c.owners {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	counts := map[DeathCount]int{}
	for _, id := range ids {
		if d, dead := c.Death(id); dead {
			counts[DeathCount{Cause: d.Cause, Fault: d.Fault, Replica: d.Replica}]++
		}
	}
	out := make([]DeathCount, 0, len(counts))
	for k, n := range counts {
		k.Sessions = n
		out = append(out, k)
	}
	sortDeathCounts(out)
	return out
}

// DeathCount is how many sessions died of one cause on one replica.
type DeathCount struct {
	Cause    string
	Fault    string
	Replica  int
	Sessions int
}

// Stats adds up the counters of the replicas that exist now.
func (c *Cluster) Stats() Stats {
	c.mu.Lock()
	var srvs []*Server
	for _, r := range c.replicas {
		if r != nil {
			srvs = append(srvs, r.srv)
		}
	}
	c.mu.Unlock()
	var t Stats
	for _, s := range srvs {
		st := s.Stats()
		t.SessionsCreated += st.SessionsCreated
		t.SessionsLive += st.SessionsLive
		t.SessionsDied += st.SessionsDied
		t.StreamsOpen += st.StreamsOpen
		t.EventsEmitted += st.EventsEmitted
		t.EventsReplayed += st.EventsReplayed
		t.DeadRequests += st.DeadRequests
		t.SessionsHeld += st.SessionsHeld
		t.SessionsDeleted += st.SessionsDeleted
		t.SessionsExpired += st.SessionsExpired
		t.SessionsRefused += st.SessionsRefused
	}
	t.WrongEra = c.wrongEra.Load()
	return t
}

// Close stops every replica and removes what a Redis log wrote. Idempotent.
func (c *Cluster) Close() {
	c.mu.Lock()
	reps := append([]*replica(nil), c.replicas...)
	draining := c.draining
	c.closed = true
	c.mu.Unlock()
	for _, r := range reps {
		if r != nil {
			r.srv.Close()
		}
	}
	for _, s := range draining {
		s.Close() // a retire still pending finds it closed: Close is idempotent
	}
	if c.mirror != nil {
		c.mirror.close()
	}
}

// pinWriter tells the router a new session's id the moment its response
// headers go out.
type pinWriter struct {
	http.ResponseWriter
	pin    func(string)
	pinned bool
}

func (p *pinWriter) WriteHeader(code int) {
	p.doPin()
	p.ResponseWriter.WriteHeader(code)
}

func (p *pinWriter) Write(b []byte) (int, error) {
	p.doPin()
	return p.ResponseWriter.Write(b)
}

func (p *pinWriter) doPin() {
	if p.pinned {
		return
	}
	p.pinned = true
	if id := p.Header().Get("Mcp-Session-Id"); id != "" {
		p.pin(id)
	}
}

// Unwrap lets http.ResponseController reach the connection (flushes).
func (p *pinWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }
