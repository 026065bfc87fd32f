package refserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/mcpchaos/mcpchaos/redact"
)

// redisLog mirrors every session's event log into a Redis stream, as
// multi-node MCP deployments keep their resumability log: one stream per
// session (key <prefix><session id>), entries trimmed by length (MAXLEN) and
// by time (MINID), and the key expiring once its newest event is past
// retention. None of that looks at the session store: the log outlives
// sessions exactly as its retention says.
//
// Keys carry a random per-cluster prefix, so runs sharing one Redis never see
// each other, and close deletes every key of that prefix (and nothing else).
//
// The client is redigo (a connection pool and the wire protocol, nothing
// more): go-redis, used before, made the binary 41.5 MB where redigo leaves
// 30.3 (issue 17's limit is 40), for the handful of commands this sends.
type redisLog struct {
	pool      *redis.Pool
	prefix    string
	max       int64
	retention time.Duration
	errs      atomic.Int64 // writes Redis refused or timed out on
}

// redisTimeout bounds each Redis command: a log write happens under a
// session log's lock.
const redisTimeout = time.Second

func openRedisLog(url string, maxEvents int, retention time.Duration) (*redisLog, error) {
	if _, err := redact.ParseURL(url); err != nil { // before redigo parses it: its error would quote a password
		return nil, fmt.Errorf("event log: %w", err)
	}
	dial := func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, url, redis.DialConnectTimeout(redisTimeout),
			redis.DialReadTimeout(redisTimeout), redis.DialWriteTimeout(redisTimeout))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*redisTimeout)
	defer cancel()
	c, err := dial(ctx)
	if err == nil {
		_, err = c.Do("PING")
		_ = c.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("event log %s: Redis did not answer PING (%w); start redis-server there or name another", redact.URLString(url), err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &redisLog{
		pool: &redis.Pool{
			DialContext: dial,
			// As go-redis's defaults were: ten connections a CPU, a caller waits for one
			// (bounded by its context) rather than opening a connection per session.
			MaxIdle:     10 * runtime.GOMAXPROCS(0),
			MaxActive:   10 * runtime.GOMAXPROCS(0),
			Wait:        true,
			IdleTimeout: 30 * time.Minute,
			// A connection idle for a while may have been closed by Redis or a proxy in between.
			TestOnBorrow: func(c redis.Conn, last time.Time) error {
				if time.Since(last) < time.Minute {
					return nil
				}
				_, err := c.Do("PING")
				return err
			},
		},
		prefix:    "mcpchaos:" + hex.EncodeToString(b[:]) + ":log:",
		max:       int64(maxEvents),
		retention: retention,
	}, nil
}

func (r *redisLog) key(k sessionKey) string { return r.prefix + k.String() }

// conn borrows a pooled connection, waiting at most redisTimeout for one.
func (r *redisLog) conn() (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	return r.pool.GetContext(ctx)
}

// append writes one event with its retention, in one round trip.
func (r *redisLog) append(k sessionKey, e event) {
	if err := r.appendErr(k, e); err != nil {
		r.errs.Add(1)
	}
}

func (r *redisLog) appendErr(k sessionKey, e event) error {
	c, err := r.conn()
	if err != nil {
		return err
	}
	defer c.Close()
	key := r.key(k)
	final := "0"
	if e.final {
		final = "1"
	}
	// XADD key MAXLEN max * field value ... (exact trimming, as go-redis's MaxLen sent it)
	if err := c.Send("XADD", key, "MAXLEN", r.max, "*", "id", strconv.FormatUint(e.id, 10), "at", strconv.FormatInt(e.at, 10), "s", strconv.FormatUint(uint64(e.stream), 10), "f", final, "d", e.data); err != nil {
		return err
	}
	if r.retention > 0 {
		minID := strconv.FormatInt((e.at-int64(r.retention))/int64(time.Millisecond), 10)
		if err := c.Send("XTRIM", key, "MINID", minID); err != nil {
			return err
		}
		if err := c.Send("PEXPIRE", key, r.retention.Milliseconds()); err != nil {
			return err
		}
	}
	replies, err := redis.Values(c.Do(""))
	if err != nil {
		return err
	}
	for _, v := range replies {
		if e, ok := v.(redis.Error); ok {
			return e
		}
	}
	return nil
}

// load reads a session's stream, keeping only events within retention at
// now (entries of a session nobody writes to any more are trimmed by time
// only here).
func (r *redisLog) load(k sessionKey, now int64) ([]event, bool) {
	msgs, err := r.xrange(r.key(k))
	if err != nil {
		r.errs.Add(1)
		return nil, false
	}
	var out []event
	for _, m := range msgs {
		e, ok := parseRedisEvent(m)
		if !ok {
			continue
		}
		if r.retention > 0 && now-e.at >= int64(r.retention) {
			continue
		}
		out = append(out, e)
	}
	return out, len(out) > 0
}

// xrange returns the field maps of a stream's first max entries.
func (r *redisLog) xrange(key string) ([]map[string]string, error) {
	c, err := r.conn()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	entries, err := redis.Values(c.Do("XRANGE", key, "-", "+", "COUNT", r.max))
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(entries))
	for _, entry := range entries {
		pair, err := redis.Values(entry, nil) // [id, [field, value, ...]]
		if err != nil || len(pair) != 2 {
			return nil, errors.New("XRANGE: an entry is not [id, fields]")
		}
		fields, err := redis.StringMap(pair[1], nil)
		if err != nil {
			return nil, fmt.Errorf("XRANGE: %w", err)
		}
		out = append(out, fields)
	}
	return out, nil
}

func parseRedisEvent(v map[string]string) (event, bool) {
	id, err1 := strconv.ParseUint(v["id"], 10, 64)
	at, err2 := strconv.ParseInt(v["at"], 10, 64)
	stream, err3 := strconv.ParseUint(v["s"], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return event{}, false
	}
	e := event{id: id, at: at, stream: uint32(stream), final: v["f"] == "1"}
	if d := v["d"]; d != "" {
		e.data = []byte(d)
	}
	return e, true
}

// close deletes every key this log wrote and closes the pool.
func (r *redisLog) close() {
	defer r.pool.Close()
	c, err := r.conn()
	if err != nil {
		return
	}
	defer c.Close()
	deadline := time.Now().Add(5 * redisTimeout)
	cursor := "0"
	for time.Now().Before(deadline) {
		reply, err := redis.Values(c.Do("SCAN", cursor, "MATCH", r.prefix+"*", "COUNT", 500))
		if err != nil || len(reply) != 2 {
			return
		}
		next, err1 := redis.String(reply[0], nil)
		keys, err2 := redis.Strings(reply[1], nil)
		if err1 != nil || err2 != nil {
			return
		}
		if len(keys) > 0 {
			_, _ = c.Do("DEL", redis.Args{}.AddFlat(keys)...)
		}
		if cursor = next; cursor == "0" {
			return
		}
	}
}

// LogErrors counts the Redis writes and reads of the event log that failed.
func (c *Cluster) LogErrors() int64 {
	if c.mirror == nil {
		return 0
	}
	return c.mirror.errs.Load()
}
