package refserver

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// standaloneStream tags the events of a session's GET stream; its POST
// streams are numbered from 1.
const standaloneStream = 0

// event is one entry of a session's event log: a JSON-RPC message sent on one
// of the session's SSE streams, or a priming marker (nil data) that exists
// only so that its id is a cursor the client may resume from.
type event struct {
	id     uint64
	at     int64  // emission, unix nanos: Retention counts from here
	stream uint32 // standaloneStream, or the session's n-th POST stream
	final  bool   // the response that ends a POST stream
	data   []byte // the encoded message, never modified once logged
}

// logLimits are the settings every log of a server shares.
type logLimits struct {
	ids       atomic.Uint64 // the server's (or cluster's) one event-id counter
	max       int           // RetentionEvents
	retention int64         // nanos; 0: no time limit
	mirror    logMirror     // a durable copy of every event (Redis), or nil
}

// logMirror keeps a durable copy of the event logs outside the process (a
// Redis stream per session), so that a replica that never held a session, or
// one restarted since, can still replay it: the production shape of the
// seed's trap. Copies are written under the log's lock, so each stays in id
// order.
type logMirror interface {
	append(key sessionKey, e event)
	// load returns the events of key still within retention, oldest first.
	load(key sessionKey, now int64) ([]event, bool)
}

// eventLog is the event log of one session: every event of its streams, in
// id order, for Retention and at most RetentionEvents. It belongs to the log
// store, not to the session record, so it outlives the session when
// Retention allows; answering a replay from it says nothing about liveness.
type eventLog struct {
	lim *logLimits
	key sessionKey // the session the log belongs to: names its mirror
	// primes says that the session's client negotiated 2025-11-25 or later, whose clients
	// expect a priming event (an id, empty data) first on every stream; older clients may
	// take its empty data for a message, so they get none (the SDKs do the same). Set before
	// the log is shared.
	primes bool

	mu         sync.Mutex
	events     []event // events[head:] are kept, oldest first
	head       int
	evicted    uint64      // the newest id evicted so far (evict.go); 0: none
	posts      uint32      // POST streams opened so far
	ended      bool        // the session died: Strict closes its streams
	standalone *follower   // the connection serving the GET stream, if any
	followers  []*follower // open connections reading this log
}

func newEventLog(lim *logLimits, key sessionKey) *eventLog { return &eventLog{lim: lim, key: key} }

// follower is one open SSE connection reading one stream of a log: the
// handler goroutine of a GET. Emitters poke it; it pulls what is new from the
// log, so a slow reader costs no queue.
type follower struct {
	stream    uint32
	wake      chan struct{} // capacity 1: a poke never blocks, pokes coalesce
	keepalive atomic.Bool   // the ticker asks for a keepalive comment
	replaced  atomic.Bool   // a resume took the GET stream over: stop
}

func newFollower(stream uint32) *follower {
	return &follower{stream: stream, wake: make(chan struct{}, 1)}
}

func (f *follower) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// evictLocked drops events past Retention or beyond RetentionEvents.
func (l *eventLog) evictLocked(now int64) {
	for l.head < len(l.events) {
		e := &l.events[l.head]
		expired := l.lim.retention > 0 && now-e.at >= l.lim.retention
		if !expired && len(l.events)-l.head <= l.lim.max {
			break
		}
		l.evicted = e.id
		*e = event{} // free the data now, not at the next compaction
		l.head++
	}
	switch {
	case l.head == len(l.events):
		l.events, l.head = l.events[:0], 0
	case l.head >= 32 && 2*l.head >= len(l.events):
		n := copy(l.events, l.events[l.head:])
		clear(l.events[n:])
		l.events, l.head = l.events[:n], 0
	}
}

func (l *eventLog) appendLocked(now int64, stream uint32, data []byte, final bool) uint64 {
	id := l.lim.ids.Add(1) // taken under l.mu, so each log stays in id order
	e := event{id: id, at: now, stream: stream, final: final, data: data}
	l.events = append(l.events, e)
	l.evictLocked(now)
	if l.lim.mirror != nil {
		l.lim.mirror.append(l.key, e)
	}
	return id
}

// indexLocked is the index of the first kept event whose id is >= id, and
// whether it is exactly id.
func (l *eventLog) indexLocked(id uint64) (int, bool) {
	i, found := slices.BinarySearchFunc(l.events[l.head:], id, func(e event, id uint64) int {
		return cmp.Compare(e.id, id)
	})
	return l.head + i, found
}

// emit logs a message on one of the log's streams, wakes the connections
// reading the log, and returns the message's event id.
func (l *eventLog) emit(now int64, stream uint32, data []byte, final bool) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.appendLocked(now, stream, data, final)
	for _, f := range l.followers {
		f.poke()
	}
	return id
}

// openPost starts a POST stream and logs its priming marker.
func (l *eventLog) openPost(now int64) (stream uint32, priming uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.posts++
	return l.posts, l.appendLocked(now, l.posts, nil, false)
}

// lookup finds the stream a cursor belongs to, if the cursor is still kept.
func (l *eventLog) lookup(now int64, cursor uint64) (stream uint32, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evictLocked(now)
	i, found := l.indexLocked(cursor)
	if !found {
		return 0, false
	}
	return l.events[i].stream, true
}

// attachLocked registers f. If f wants the GET stream and another
// connection serves it, a resume takes it over (that connection is most
// likely the one that dropped, and the server may not have noticed yet: a
// load balancer's idle timeout can leave it half-open), while a fresh GET is
// refused.
func (l *eventLog) attachLocked(f *follower, takeover bool) bool {
	if f.stream == standaloneStream {
		if old := l.standalone; old != nil {
			if !takeover {
				return false
			}
			old.replaced.Store(true)
			old.poke()
			l.followers = slices.DeleteFunc(l.followers, func(g *follower) bool { return g == old })
		}
		l.standalone = f
	}
	l.followers = append(l.followers, f)
	return true
}

// open attaches f to read what its stream gets from now on and logs the
// priming marker that marks where that starts.
func (l *eventLog) open(f *follower, now int64) (priming uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.attachLocked(f, false) {
		return 0, false
	}
	return l.appendLocked(now, f.stream, nil, false), true
}

// resume attaches f to read its stream after a cursor, taking the GET
// stream over if needed (or, without takeover, refusing while another
// connection holds it); since delivers what was missed.
func (l *eventLog) resume(f *follower, takeover bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.attachLocked(f, takeover)
}

func (l *eventLog) detach(f *follower) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.standalone == f {
		l.standalone = nil
	}
	l.followers = slices.DeleteFunc(l.followers, func(g *follower) bool { return g == f })
}

// since appends to dst the messages of stream with ids after the cursor. It
// also says whether the stream has ended with a response at or after the
// cursor (a POST stream is then complete) and whether the session died.
func (l *eventLog) since(dst []event, now int64, cursor uint64, stream uint32) (_ []event, final, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evictLocked(now)
	i, _ := l.indexLocked(cursor)
	for _, e := range l.events[i:] {
		if e.stream != stream {
			continue
		}
		final = final || e.final
		if e.id > cursor && e.data != nil {
			dst = append(dst, e)
		}
	}
	return dst, final, l.ended
}

// end records that the session died and wakes the readers, so that a Strict
// server can close them.
func (l *eventLog) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	for _, f := range l.followers {
		f.poke()
	}
}

// keepalive asks every open connection of the log for a keepalive comment.
func (l *eventLog) keepalive() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.followers {
		f.keepalive.Store(true)
		f.poke()
	}
}

// idle says whether the log can be freed: its session is dead, its events
// are gone and nobody reads it.
func (l *eventLog) idle(now int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evictLocked(now)
	return l.ended && len(l.events) == 0 && len(l.followers) == 0
}

// logStore maps sessions to their event logs. It is separate from the
// session store on purpose: a Permissive replay reads only this.
type logStore struct {
	shards [shardCount]logShard
}

type logShard struct {
	mu   sync.RWMutex
	logs map[sessionKey]*eventLog
}

func newLogStore() *logStore {
	st := &logStore{}
	for i := range st.shards {
		st.shards[i].logs = make(map[sessionKey]*eventLog)
	}
	return st
}

func (st *logStore) add(k sessionKey, l *eventLog) {
	sh := &st.shards[k.shard()]
	sh.mu.Lock()
	sh.logs[k] = l
	sh.mu.Unlock()
}

// get returns the log of k, or nil if k never had one or it was freed.
func (st *logStore) get(k sessionKey) *eventLog {
	sh := &st.shards[k.shard()]
	sh.mu.RLock()
	l := sh.logs[k]
	sh.mu.RUnlock()
	return l
}

// each calls fn for every log, holding no lock while fn runs.
func (st *logStore) each(fn func(sessionKey, *eventLog)) {
	type entry struct {
		k sessionKey
		l *eventLog
	}
	var buf []entry
	for i := range st.shards {
		sh := &st.shards[i]
		buf = buf[:0]
		sh.mu.RLock()
		for k, l := range sh.logs {
			buf = append(buf, entry{k, l})
		}
		sh.mu.RUnlock()
		for _, e := range buf {
			fn(e.k, e.l)
		}
	}
}

// freeIdle removes the log of k if it is still l and idle.
func (st *logStore) freeIdle(k sessionKey, l *eventLog, now int64) {
	sh := &st.shards[k.shard()]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.logs[k] == l && l.idle(now) {
		delete(sh.logs, k)
	}
}

// addIfAbsent adds l for k unless k has a log already, and returns k's log.
func (st *logStore) addIfAbsent(k sessionKey, l *eventLog) *eventLog {
	sh := &st.shards[k.shard()]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.logs[k]; old != nil {
		return old
	}
	sh.logs[k] = l
	return l
}

// logSize is what a log store keeps: logs, their events, and the bytes of those events.
type logSize struct{ Logs, Entries, Bytes int64 }

// size walks the store (each log's lock briefly): for a scrape, not a hot path. Events past
// retention that no one has evicted yet are counted: they are still held.
func (st *logStore) size() logSize {
	var z logSize
	st.each(func(_ sessionKey, l *eventLog) {
		l.mu.Lock()
		z.Logs++
		for _, e := range l.events[l.head:] {
			z.Entries++
			z.Bytes += int64(len(e.data))
		}
		l.mu.Unlock()
	})
	return z
}
