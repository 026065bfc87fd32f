package refserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpchaos/mcpchaos/internal/redistest"
)

// The Redis log keeps each session's events in a stream trimmed by length and by time, whatever
// became of the session, and removes every key it wrote when it closes (and nobody else's).
func TestRedisLogRetention(t *testing.T) {
	url := redistest.Start(t)
	const retention = time.Minute
	m, err := openRedisLog(url, 3, retention)
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "someone-else", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}

	key := newSessionKey()
	t0 := time.Now().UnixNano()
	for i := range 5 {
		m.append(key, event{id: uint64(10 + i), at: t0, stream: 1, data: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	m.append(key, event{id: 15, at: t0, stream: 2, final: true}) // a priming marker: no data
	if n := rdb.XLen(ctx, m.key(key)).Val(); n != 3 {
		t.Errorf("stream holds %d entries, want the last 3 (retention_events)", n)
	}
	got, ok := m.load(key, t0)
	if !ok || len(got) != 3 || got[0].id != 13 || string(got[1].data) != `{"n":4}` || got[2].data != nil || !got[2].final || got[2].stream != 2 {
		t.Errorf("load = %+v, %v", got, ok)
	}
	if got, ok := m.load(key, t0+int64(retention)); ok || len(got) != 0 {
		t.Errorf("past retention, load = %+v: events must expire by time", got)
	}
	if ttl := rdb.PTTL(ctx, m.key(key)).Val(); ttl <= 0 || ttl > retention {
		t.Errorf("stream key expires in %s, want within the retention %s", ttl, retention)
	}
	if m.errs.Load() != 0 {
		t.Errorf("%d Redis errors", m.errs.Load())
	}
	m.close()
	if n := rdb.Exists(ctx, "someone-else").Val(); n != 1 {
		t.Error("close removed a key it did not write")
	}
	if keys := rdb.Keys(ctx, "mcpchaos:*").Val(); len(keys) != 0 {
		t.Errorf("close left %v", keys)
	}
}
