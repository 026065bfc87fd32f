package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"sync/atomic"
	"time"
)

// Stream is an open GET stream.
type Stream struct {
	Status int
	Body   string // start of the body when Status is not 200
	// body is the open stream's body. Only the body is kept, not the response: a held stream
	// lives long, and the response's header map and request are a kilobyte it never reads again.
	body io.ReadCloser
	// encoding is what an error over the event cap says of the body's Content-Encoding.
	encoding string
	cancel   context.CancelFunc
	retry    atomic.Int64
	conduct  *Conduct    // the server's conduct record (conduct.go)
	handed   atomic.Bool // the body belongs to the conduct's sizer (Classify)
}

// OpenStream sends the GET for the session's standalone stream, with Last-Event-ID when cursor
// is not empty (a replay). It returns once the response headers are in; a non-200 stream
// carries the status and is already closed. ctx ends the stream.
func (s *Session) OpenStream(ctx context.Context, cursor string) (*Stream, error) {
	if s.Stateless {
		// The stateless revision has no GET stream; its servers answer 405, so answer that
		// without asking.
		return &Stream{Status: http.StatusMethodNotAllowed, cancel: func() {}}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ep.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	s.headers(req)
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	// The request timeout bounds the wait for headers only; an open stream may idle for long.
	headers := time.AfterFunc(s.ep.RequestTimeout, cancel)
	resp, err := s.ep.HTTP.Do(req)
	err = redactError(err, s.ep.HTTP)
	if !headers.Stop() { // the wait for headers outlived the request timeout
		if err == nil {
			drain(resp.Body)
		}
		err = fmt.Errorf("GET stream: no response headers within %v: %w", s.ep.RequestTimeout, context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	st := &Stream{Status: resp.StatusCode, body: resp.Body, encoding: encodingNote(resp), cancel: cancel, conduct: s.ep.Conduct()}
	st.retry.Store(-1)
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == http.StatusOK && ct == "text/event-stream" {
		// The body of a chunked response keeps the response (for its trailers) for the
		// stream's life; its headers and request are not read again.
		resp.Header, resp.Request = nil, nil
		return st, nil
	}
	// Not a stream: the start of its body, for the report, within the request timeout too (a
	// body that never comes must not hold the client).
	body := time.AfterFunc(s.ep.RequestTimeout, cancel)
	st.Body = snippet(resp.Body)
	body.Stop()
	st.Close()
	if resp.StatusCode != http.StatusOK {
		return st, nil
	}
	return st, &ProtocolError{Msg: fmt.Sprintf("GET stream has content type %q", ct)}
}

// Events yields the stream's events until it ends. The error is nil when the server closed
// the stream cleanly.
func (st *Stream) Events(maxEvent int) iter.Seq2[Event, error] {
	return st.conduct.watched(readEvents(st.body, maxEvent, &st.retry), &st.retry, "GET stream")
}

// Retry is the last `retry:` value the server sent on this stream, in ms, or -1.
func (st *Stream) Retry() int64 { return st.retry.Load() }

// Close ends the stream, unless the body was handed to the conduct's sizer (Classify), which
// ends it when it is done.
func (st *Stream) Close() {
	if st.handed.Load() {
		return
	}
	st.release()
}

func (st *Stream) release() {
	st.cancel()
	if st.body != nil {
		st.body.Close()
	}
}

// Classify names the error of a read of st as ClassifyRead does, saying of an event over its
// cap that it came compressed, if it did. The first such event of the conduct is read on in
// the background to learn its size (Conduct.sizeAfter), which then owns the stream's body.
func (st *Stream) Classify(err error, maxEvent int) error {
	what := "GET stream" + st.encoding
	err = ClassifyRead(err, maxEvent)
	if te := (*TooLargeError)(nil); errors.As(err, &te) {
		st.conduct.note(HugeEvent, "%s: %s", what, (&TooLargeError{Size: int64(maxEvent)}).sizeText())
		if !st.handed.Load() && st.conduct.sizeAfter(st.body, st.release, maxEvent, what) {
			st.handed.Store(true)
		}
	}
	return encodingNamed(st.conduct.midEvent(err, what), st.encoding)
}
