package refserver

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// BenchmarkNotifyAll measures the ticker's pass over 20,000 live sessions,
// each with a reader attached: encode, log, poke. No HTTP.
func BenchmarkNotifyAll(b *testing.B) {
	const sessions = 20000
	srv := New(Config{RetentionEvents: 16})
	defer srv.Close()
	now := srv.now()
	for range sessions {
		key := newSessionKey()
		rec := &session{key: key, log: newEventLog(srv.limits, key)}
		rec.lastRefresh.Store(now)
		srv.logs.add(rec.key, rec.log)
		srv.sessions.add(rec)
		rec.log.resume(newFollower(standaloneStream), true)
	}
	var buf []*session
	b.ReportAllocs()
	for b.Loop() {
		buf = srv.notifyAll(buf, -1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sessions), "ns/session")
}

// BenchmarkNotifyFanout measures one notification reaching every one of
// 1,000 open GET streams over loopback.
func BenchmarkNotifyFanout(b *testing.B) {
	const streams = 1000
	inst, err := Start("127.0.0.1:0", Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: 0}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport}

	var delivered sync.WaitGroup
	opened := make(chan error, streams)
	for range streams {
		go func() {
			sid, err := benchSession(hc, inst.URL)
			if err != nil {
				opened <- err
				return
			}
			req, _ := http.NewRequest(http.MethodGet, inst.URL, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			resp, err := hc.Do(req)
			if err != nil {
				opened <- err
				return
			}
			defer resp.Body.Close()
			opened <- nil
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if bytes.HasPrefix(sc.Bytes(), []byte("data: {")) {
					delivered.Done()
				}
			}
		}()
	}
	for range streams {
		if err := <-opened; err != nil {
			b.Fatal(err)
		}
	}
	if got := inst.Server.Stats().StreamsOpen; got != streams {
		b.Fatalf("%d streams open, want %d", got, streams)
	}
	for b.Loop() {
		delivered.Add(streams)
		inst.Server.notifyAll(nil, -1)
		delivered.Wait()
	}
}

func benchSession(hc *http.Client, url string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(message(1, "initialize", nil))))
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var drain bytes.Buffer
	_, _ = drain.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("initialize: status %d", resp.StatusCode)
	}
	return resp.Header.Get("Mcp-Session-Id"), nil
}
