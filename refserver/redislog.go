package refserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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
type redisLog struct {
	rdb       *redis.Client
	prefix    string
	max       int64
	retention time.Duration
	errs      atomic.Int64 // writes Redis refused or timed out on
}

// redisTimeout bounds each Redis command: a log write happens under a
// session log's lock.
const redisTimeout = time.Second

// silence go-redis's logger (a process-wide setting): errors are counted and returned, and
// nothing may write over the progress display.
var silence sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func openRedisLog(url string, maxEvents int, retention time.Duration) (*redisLog, error) {
	silence.Do(func() { redis.SetLogger(quiet{}) })
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("event log %s: %w", url, err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = redisTimeout, redisTimeout, redisTimeout
	opt.MaxRetries = 1
	rdb := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*redisTimeout)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("event log %s: Redis did not answer PING (%w); start redis-server there or name another", opt.Addr, err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &redisLog{
		rdb:       rdb,
		prefix:    "mcpchaos:" + hex.EncodeToString(b[:]) + ":log:",
		max:       int64(maxEvents),
		retention: retention,
	}, nil
}

func (r *redisLog) key(k sessionKey) string { return r.prefix + k.String() }

// append writes one event with its retention, in one round trip.
func (r *redisLog) append(k sessionKey, e event) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	key := r.key(k)
	final := "0"
	if e.final {
		final = "1"
	}
	pipe := r.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{
		Stream: key,
		MaxLen: r.max,
		ID:     "*",
		Values: []any{"id", e.id, "at", e.at, "s", e.stream, "f", final, "d", e.data},
	})
	if r.retention > 0 {
		pipe.XTrimMinID(ctx, key, strconv.FormatInt((e.at-int64(r.retention))/int64(time.Millisecond), 10))
		pipe.PExpire(ctx, key, r.retention)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		r.errs.Add(1)
	}
}

// load reads a session's stream, keeping only events within retention at
// now (entries of a session nobody writes to any more are trimmed by time
// only here).
func (r *redisLog) load(k sessionKey, now int64) ([]event, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	msgs, err := r.rdb.XRangeN(ctx, r.key(k), "-", "+", r.max).Result()
	if err != nil {
		r.errs.Add(1)
		return nil, false
	}
	var out []event
	for _, m := range msgs {
		e, ok := parseRedisEvent(m.Values)
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

func parseRedisEvent(v map[string]any) (event, bool) {
	str := func(name string) string { s, _ := v[name].(string); return s }
	id, err1 := strconv.ParseUint(str("id"), 10, 64)
	at, err2 := strconv.ParseInt(str("at"), 10, 64)
	stream, err3 := strconv.ParseUint(str("s"), 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return event{}, false
	}
	e := event{id: id, at: at, stream: uint32(stream), final: str("f") == "1"}
	if d := str("d"); d != "" {
		e.data = []byte(d)
	}
	return e, true
}

// close deletes every key this log wrote and closes the client.
func (r *redisLog) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*redisTimeout)
	defer cancel()
	var cursor uint64
	for {
		keys, next, err := r.rdb.Scan(ctx, cursor, r.prefix+"*", 500).Result()
		if err != nil {
			break
		}
		if len(keys) > 0 {
			r.rdb.Del(ctx, keys...)
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	_ = r.rdb.Close()
}

// LogErrors counts the Redis writes and reads of the event log that failed.
func (c *Cluster) LogErrors() int64 {
	if c.mirror == nil {
		return 0
	}
	return c.mirror.errs.Load()
}
