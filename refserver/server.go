package refserver

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Name and version the server gives in its InitializeResult.
const (
	ServerName    = "mcpchaos-target"
	ServerVersion = "0.1.0"
)

// Protocol versions of the session family the server speaks, newest first.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Stats are the server's counters since New.
type Stats struct {
	SessionsCreated int64
	SessionsLive    int64  // alive now, whether or not a stream is open
	SessionsDied    int64  // by TTL or DELETE
	StreamsOpen     int64  // GET connections streaming now
	EventsEmitted   int64  // messages logged: notifications, progress, SSE responses
	EventsReplayed  int64  // messages sent to a GET after its Last-Event-ID that were logged before it
	DeadRequests    int64  // requests answered with DeadStatus
	ListensOpen     int64  // subscriptions/listen streams open now (stateless.go)
	ListenNotified  int64  // numbered notifications written to listen streams
	ListenSeq       uint64 // the last notification's number: how many were broadcast
	SessionsHeld    int64  // records held, alive or dead and not yet reclaimed (Config.Leak: never)
	SessionsDeleted int64  // ended by DELETE
	SessionsExpired int64  // ended by TTL, as the reaper found them
	SessionsRefused int64  // initializes answered 503 at Config.MaxSessions
	WrongEra        int64  // requests of a generation the server does not speak (Config.Era, era.go)
}

// Server is the reference MCP server. It is an http.Handler that serves the
// MCP endpoint on any path it is mounted at.
type Server struct {
	cfg       Config
	ttl       int64 // SessionTTL in nanos
	absolute  bool  // TTLMode absolute: the TTL runs from initialize, never refreshed
	deadType  string
	sessions  sessionStore
	logs      *logStore     // this server's own, or the one a Cluster's replicas share
	execs     *executions   // likewise: tool calls run, per logical call
	limits    *logLimits    // likewise
	done      chan struct{} // closed by Close: the ticker and open streams end
	cut       chan struct{} // closed by cutStreams: open streams end, the ticker goes on
	closeOnce sync.Once
	cutOnce   sync.Once
	ticker    sync.WaitGroup
	lis       listeners // the stateless revision's listen streams

	created, streams, emitted, replayed, deadRequests atomic.Int64
	deleted, expired, refused                         atomic.Int64  // leak.go, metrics.go
	wrongEra                                          *atomic.Int64 // era.go: a Cluster's replicas share one
}

// New returns a server for cfg (see Config.WithDefaults) and starts its one
// ticker goroutine; Close stops it. New panics if cfg fails Validate.
func New(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.WithDefaults()
	return newServer(cfg, newLogStore(), &logLimits{max: cfg.RetentionEvents, retention: int64(cfg.Retention)}, newExecutions())
}

// RunTwice says which tool calls the server ran more than once, by the group that named them.
func (s *Server) RunTwice() RunTwice { return s.execs.runTwice() }

// newServer starts a server whose event logs live in logs (its own, or shared
// between replicas) under lim.
func newServer(cfg Config, logs *logStore, lim *logLimits, execs *executions) *Server {
	s := &Server{
		cfg:      cfg,
		ttl:      int64(cfg.SessionTTL),
		absolute: cfg.TTLMode == TTLAbsolute,
		deadType: cfg.deadContentType(),
		done:     make(chan struct{}),
		cut:      make(chan struct{}),
		logs:     logs,
		limits:   lim,
		execs:    execs,
		wrongEra: new(atomic.Int64),
	}
	s.sessions.init()
	s.ticker.Add(1)
	go s.tick()
	return s
}

// Config returns the server's configuration, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

func (s *Server) now() int64 { return s.cfg.Now().UnixNano() }

// ServeHTTP serves the MCP endpoint: POST for messages, GET for the
// standalone stream and replays, DELETE to end a session.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.servePost(w, r)
	case http.MethodGet:
		s.serveGet(w, r)
	case http.MethodDelete:
		s.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// serveDelete ends a live session now.
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request) {
	if s.eraRefuses(w, r, nil) {
		return
	}
	key, ok := s.sessionHeader(w, r)
	if !ok {
		return
	}
	now := s.now()
	rec := s.sessions.get(key)
	if rec == nil || !rec.end(now, s.ttl) {
		s.writeDead(w)
		return
	}
	s.deleted.Add(1)
	s.release(rec, grave{now, CauseDelete}) // leak.go: unless the server leaks
	w.WriteHeader(http.StatusOK)
}

// sessionHeader checks the headers every session-scoped request carries and
// returns its session key. It answers the request itself (and returns false)
// when they are wrong. A session id that we cannot have issued yields a key
// that is in no store, so it is treated as an unknown session.
func (s *Server) sessionHeader(w http.ResponseWriter, r *http.Request) (sessionKey, bool) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !supportedVersion(v) {
		http.Error(w, "unsupported MCP-Protocol-Version "+strconv.Quote(v), http.StatusBadRequest)
		return sessionKey{}, false
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
		return sessionKey{}, false
	}
	key, _ := parseSessionKey(id)
	return key, true
}

// writeDead answers a request on a dead or unknown session.
func (s *Server) writeDead(w http.ResponseWriter) {
	s.deadRequests.Add(1)
	w.Header().Set("Content-Type", s.deadType)
	w.WriteHeader(s.cfg.DeadStatus)
	_, _ = w.Write([]byte(s.cfg.DeadBody))
}

// DeathTime is the exact moment a session died: its last refresh plus the
// TTL (even if the reaper noticed later), or the time of its DELETE. False if
// the session is alive or unknown.
func (s *Server) DeathTime(sessionID string) (time.Time, bool) {
	key, ok := parseSessionKey(sessionID)
	if !ok {
		return time.Time{}, false
	}
	return s.sessions.deathTime(key, s.now(), s.ttl)
}

// Stats returns the server's counters. Counting live and dead sessions takes
// a pass over the session store: call it a few times a second, not per
// request.
func (s *Server) Stats() Stats {
	live, died := s.sessions.count(s.now(), s.ttl)
	return Stats{
		SessionsCreated: s.created.Load(),
		SessionsLive:    live,
		SessionsDied:    died,
		SessionsHeld:    s.sessions.held.Load(),
		SessionsDeleted: s.deleted.Load(),
		SessionsExpired: s.expired.Load(),
		SessionsRefused: s.refused.Load(),
		WrongEra:        s.wrongEra.Load(),
		StreamsOpen:     s.streams.Load(),
		EventsEmitted:   s.emitted.Load(),
		EventsReplayed:  s.replayed.Load(),
		DeadRequests:    s.deadRequests.Load(),
		ListensOpen:     s.lis.open.Load(),
		ListenNotified:  s.lis.sent.Load(),
		ListenSeq:       s.lis.seq.Load(),
	}
}

// Close stops the ticker and ends open streams and running slow tools. It is
// idempotent. The handler still answers requests afterwards, but streams end
// at once.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.ticker.Wait()
}

// tick is the server's one background goroutine: it emits notifications,
// asks open streams for keepalives and reaps, each at its own interval.
func (s *Server) tick() {
	defer s.ticker.Done()
	var tickers []*time.Ticker
	defer func() {
		for _, t := range tickers {
			t.Stop()
		}
	}()
	every := func(d time.Duration) <-chan time.Time {
		if d <= 0 {
			return nil // never fires
		}
		t := time.NewTicker(d)
		tickers = append(tickers, t)
		return t.C
	}
	// Notifications go out in notifySlots turns per interval, each session in its own turn, so
	// that sessions' streams fall quiet (and load balancers cut them) at scattered moments, as
	// they do behind real servers, not all in the same millisecond.
	notify := every(s.cfg.NotifyInterval / notifySlots)
	keepalive, reap := every(s.cfg.Keepalive), every(s.cfg.reapInterval())
	var buf []*session
	turn := 0
	for {
		select {
		case <-s.done:
			return
		case <-notify:
			buf = s.notifyAll(buf, turn)
			if turn == 0 {
				s.lis.broadcast() // once an interval, to every listen stream
			}
			turn = (turn + 1) % notifySlots
		case <-keepalive:
			s.logs.each(func(_ sessionKey, l *eventLog) { l.keepalive() })
		case <-reap:
			buf = s.reap(buf)
		}
	}
}

// notifySlots is how many turns an interval's notifications are spread over.
const notifySlots = 8

// notifyAll gives each live session whose turn it is (every one when turn < 0) one
// notifications/message on its GET stream.
func (s *Server) notifyAll(buf []*session, turn int) []*session {
	now := s.now()
	return s.sessions.each(buf, func(rec *session) {
		if turn >= 0 && int(rec.key[0])%notifySlots != turn {
			return
		}
		if _, dead := rec.deadSince(now, s.ttl); dead {
			return
		}
		rec.log.emit(now, standaloneStream, logMessage(rec.notified.Add(1)), false)
		s.emitted.Add(1)
	})
}

// reap frees what liveness no longer needs: records of dead sessions become
// graves (their logs are told, so Strict streams close), and logs of dead
// sessions whose events are all gone are dropped. A leaking server (leak.go)
// tells the logs and counts the deaths, and frees nothing.
func (s *Server) reap(buf []*session) []*session {
	now := s.now()
	deaths := make(map[sessionKey]grave)
	var ended []*eventLog
	buf = s.sessions.each(buf, func(rec *session) {
		if g, dead := rec.death(now, s.ttl); dead {
			if s.notice(rec, g) {
				ended = append(ended, rec.log)
			}
			if !s.cfg.Leak {
				deaths[rec.key] = g
			}
		}
	})
	s.sessions.bury(deaths)
	for _, l := range ended {
		l.end()
	}
	if s.cfg.Leak {
		return buf
	}
	s.logs.each(func(k sessionKey, l *eventLog) {
		if l.idle(now) {
			s.logs.freeIdle(k, l, now)
		}
	})
	return buf
}

func supportedVersion(v string) bool { return slices.Contains(protocolVersions, v) }

// loopbackOrigin says whether an Origin header names this machine; others
// get 403, as the spec asks against DNS rebinding.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
