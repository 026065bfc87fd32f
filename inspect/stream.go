package inspect

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// rawStream is a GET stream as the server answered it, read in one of a few ways.
type rawStream struct {
	status int
	// garbage says why a 200 is not an SSE stream ("" when it is one, or when not 200).
	garbage string
	resp    *http.Response
	cancel  context.CancelFunc
	ended   atomic.Bool    // the body ended (held streams)
	held    sync.WaitGroup // the hold goroutine: close waits for it, so nothing it writes outlives the stream
	// answer, when set, answers the server requests that come on the stream (a fresh stream's;
	// a replay's are history, sent before).
	answer func(data []byte)
	// conduct notes what the server's events show (wire.Conduct).
	conduct *wire.Conduct
}

// stream says whether the GET was answered with an SSE stream.
func (rs *rawStream) stream() bool {
	return rs != nil && rs.status == http.StatusOK && rs.garbage == ""
}

// openStream sends a GET as s (with cursor, if any) and returns once headers are in; nil when
// it failed in transport (noted). A 200 that is not an SSE stream is noted as a violation.
func (in *inspector) openStream(ctx context.Context, s *wire.Session, cursor string) *rawStream {
	rctx, cancel := context.WithCancel(ctx)
	headers := time.AfterFunc(in.o.Timeout, cancel)
	resp, err := s.Do(rctx, http.MethodGet, cursor, nil)
	headers.Stop()
	if err != nil {
		cancel()
		if ctx.Err() == nil {
			in.note("GET failed: %v", err)
		}
		return nil
	}
	rs := &rawStream{status: resp.StatusCode, resp: resp, cancel: cancel, conduct: in.ep.Conduct()}
	if cursor == "" {
		rs.answer = func(data []byte) { in.serverMessage(ctx, s, data) }
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ce := resp.Header.Get("Content-Encoding"); rs.status == http.StatusOK && (ct != "text/event-stream" || ce != "" && ce != "identity") {
		body := time.AfterFunc(in.o.Timeout, cancel)
		rs.garbage = fmt.Sprintf("a 200 GET of content type %q%s: %q", ct, encoding(resp), snippet(resp.Body))
		body.Stop()
		in.violation("GET: %s", rs.garbage)
	}
	if !rs.stream() {
		rs.close()
	}
	return rs
}

func (rs *rawStream) close() {
	if rs == nil {
		return
	}
	rs.cancel()
	rs.resp.Body.Close()
	rs.held.Wait() // an answer to a server request in flight finishes before Inspect returns
}

// hold reads the stream in the background until it ends (answering server requests), so that
// the server can write to it and open can tell whether it still stands.
func (rs *rawStream) hold() {
	rs.held.Go(func() {
		defer rs.ended.Store(true)
		for ev, err := range rs.conduct.Events(rs.resp.Body, maxEvent, "GET stream") {
			if err != nil {
				return
			}
			if ev.Data != "" && rs.answer != nil {
				rs.answer([]byte(ev.Data))
			}
		}
	})
}

// open reports whether a held stream still stands.
func (rs *rawStream) open() bool { return rs != nil && !rs.ended.Load() }

// events yields the stream's events to keep until it ends, keep says stop, or wait passes;
// the stream is closed afterwards.
func (rs *rawStream) events(wait time.Duration, keep func(wire.Event) bool) {
	done := make(chan struct{})
	timer := time.AfterFunc(wait, func() { rs.close() })
	defer timer.Stop()
	go func() {
		defer close(done)
		n := 0
		for ev, err := range rs.conduct.Events(rs.resp.Body, maxEvent, "GET stream") {
			if n++; err != nil || n > maxReplyEvents {
				return
			}
			if ev.Data != "" && rs.answer != nil {
				rs.answer([]byte(ev.Data))
			}
			if !keep(ev) {
				return
			}
		}
	}()
	<-done
	rs.close()
}

// ids returns up to n distinct event ids (priming events included) that arrive within wait.
func (rs *rawStream) ids(n int, wait time.Duration) []string {
	var ids []string
	rs.events(wait, func(ev wire.Event) bool {
		if ev.Cursor != "" && (len(ids) == 0 || ids[len(ids)-1] != ev.Cursor) {
			ids = append(ids, ev.Cursor)
		}
		return len(ids) < n
	})
	return ids
}

// dataIDs returns the ids of the events with data that arrive within wait, stopping early
// once enough says so.
func (rs *rawStream) dataIDs(wait time.Duration, enough func([]string) bool) []string {
	var ids []string
	rs.events(wait, func(ev wire.Event) bool {
		if ev.Data != "" {
			ids = append(ids, ev.Cursor)
		}
		return !enough(ids)
	})
	return ids
}
