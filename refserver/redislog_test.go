package refserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

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
	rdb, err := redis.DialURL(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if _, err := rdb.Do("SET", "someone-else", "x"); err != nil {
		t.Fatal(err)
	}

	key := newSessionKey()
	t0 := time.Now().UnixNano()
	for i := range 5 {
		m.append(key, event{id: uint64(10 + i), at: t0, stream: 1, data: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	m.append(key, event{id: 15, at: t0, stream: 2, final: true}) // a priming marker: no data
	if n, _ := redis.Int(rdb.Do("XLEN", m.key(key))); n != 3 {
		t.Errorf("stream holds %d entries, want the last 3 (retention_events)", n)
	}
	got, ok := m.load(key, t0)
	if !ok || len(got) != 3 || got[0].id != 13 || string(got[1].data) != `{"n":4}` || got[2].data != nil || !got[2].final || got[2].stream != 2 {
		t.Errorf("load = %+v, %v", got, ok)
	}
	if got, ok := m.load(key, t0+int64(retention)); ok || len(got) != 0 {
		t.Errorf("past retention, load = %+v: events must expire by time", got)
	}
	if ms, _ := redis.Int64(rdb.Do("PTTL", m.key(key))); ms <= 0 || time.Duration(ms)*time.Millisecond > retention {
		ttl := time.Duration(ms) * time.Millisecond
		t.Errorf("stream key expires in %s, want within the retention %s", ttl, retention)
	}
	if m.errs.Load() != 0 {
		t.Errorf("%d Redis errors", m.errs.Load())
	}
	m.close()
	if n, _ := redis.Int(rdb.Do("EXISTS", "someone-else")); n != 1 {
		t.Error("close removed a key it did not write")
	}
	if keys, _ := redis.Strings(rdb.Do("KEYS", "mcpchaos:*")); len(keys) != 0 {
		t.Errorf("close left %v", keys)
	}
}

// A Redis that does not answer is an error naming where and what to do, never quoting the URL's
// password (the URL comes from a workload file that may hold one).
func TestRedisLogUnreachableKeepsPassword(t *testing.T) {
	for _, url := range []string{"redis://user:s3cret@127.0.0.1:1/0", "redis://:s3cret@127.0.0.1:1/0", "redis://u:s3cret/x@127.0.0.1:1/0"} {
		_, err := openRedisLog(url, 10, time.Minute)
		if err == nil {
			t.Fatalf("%s: opened a log on a closed port", url)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error quotes the password: %v", err)
		}
	}
	_, err := openRedisLog("redis://127.0.0.1:1/0", 10, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "redis-server") {
		t.Errorf("error = %v, want the address and what to do", err)
	}
}
