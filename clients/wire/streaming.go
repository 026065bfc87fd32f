package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"
)

// Streaming wraps an HTTP/1.1 transport so that every held SSE stream (a GET asking for
// text/event-stream) gets a connection of its own that is read on the caller's goroutine;
// every other request goes to base and its pool.
//
// Why not base for the streams too: net/http keeps two goroutines (a read loop and a write
// loop) and two buffers for every connection it owns, and a held stream owns one for its
// whole life. Measured with `mcpchaos bench`, that is two thirds of this client's goroutines
// and about half its memory per held session, while the stream itself needs one reader. The
// request is still written by net/http (Request.Write) and the response parsed by net/http
// (ReadResponse, chunked bodies included): only the connection's ownership changes. Over
// HTTP/2 streams share connections and base is used as it is.
func Streaming(base *http.Transport) http.RoundTripper {
	if base.Protocols != nil && !base.Protocols.HTTP1() {
		return base
	}
	return &streaming{base: base}
}

type streaming struct {
	base *http.Transport
}

// bufferSize is the read buffer of a held stream, held for its life: headers and SSE lines pass
// through it (header lines longer than it are assembled by net/textproto, events by the SSE
// parser); a chunk-size line must fit in it, and real ones are a few bytes.
const bufferSize = 512

func (s *streaming) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || !acceptsStream(req.Header.Get("Accept")) {
		return s.base.RoundTrip(req)
	}
	ctx := req.Context()
	addr := HostPort(req.URL)
	dial := s.base.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme == "https" {
		cfg := &tls.Config{}
		if s.base.TLSClientConfig != nil {
			cfg = s.base.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = req.URL.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	// Cancelling the request closes the connection; no goroutine waits for that.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	w := bufio.NewWriterSize(conn, bufferSize)
	if err := req.Write(w); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	// http.ReadResponse puts no bound on the header block (the transport's
	// MaxResponseHeaderBytes does not reach here), so the reader under it has one until the
	// headers are in.
	lim := &headerLimit{r: conn, left: MaxHeaderBytes + bufferSize}
	resp, err := http.ReadResponse(bufio.NewReaderSize(lim, bufferSize), req)
	if err != nil {
		if lim.left <= 0 {
			err = &TooLargeError{What: "response header block", Limit: MaxHeaderBytes}
		}
		return fail(err)
	}
	lim.left = -1
	_ = conn.SetDeadline(time.Time{})
	resp.Body = &streamBody{ReadCloser: resp.Body, conn: conn, stop: stop}
	return resp, nil
}

// headerLimit ends a reader after left bytes, until left is set negative (no limit). It is read
// by one goroutine only.
type headerLimit struct {
	r    io.Reader
	left int
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.r.Read(p)
	}
	if l.left == 0 {
		return 0, errHeaderTooLarge
	}
	if len(p) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= n
	return n, err
}

var errHeaderTooLarge = errors.New("response header block over its cap")

// CloseIdleConnections reaches base's pool.
func (s *streaming) CloseIdleConnections() { s.base.CloseIdleConnections() }

// streamBody closes its connection with the body: a held stream is never reused.
type streamBody struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
	once sync.Once
}

func (b *streamBody) Close() error {
	b.once.Do(func() {
		b.stop()
		b.conn.Close()
	})
	return nil
}

func acceptsStream(accept string) bool {
	mt, _, err := mime.ParseMediaType(accept)
	return err == nil && mt == "text/event-stream"
}
