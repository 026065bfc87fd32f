package wire

import (
	"bytes"
	"context"
	"io"
	"iter"
	"net/http"
)

// Do sends one raw request as this session: its id and protocol version go with it, and
// cursor, when not empty, as Last-Event-ID. It is for looking at a server's answers as they
// are (mcpchaos inspect): the caller reads and closes the body. A POST gets body as its
// JSON-RPC message.
func (s *Session) Do(ctx context.Context, method, cursor string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.ep.URL, r)
	if err != nil {
		return nil, err
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	s.headers(req)
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	resp, err := s.ep.HTTP.Do(req)
	return resp, redactError(err, s.ep.HTTP)
}

// Endpoint returns the endpoint the session belongs to.
func (s *Session) Endpoint() *Endpoint { return s.ep }

// Detached returns a session that carries id (and this session's protocol) without owning it:
// for sending a dead session's id from a client that never held it, or none at all ("").
func (s *Session) Detached(id string) *Session {
	return &Session{ep: s.ep, ID: id, Protocol: s.Protocol, Stateless: s.Stateless}
}

// Adopt returns a session of ep that carries id, initialized by someone else (the Go SDK's
// client, whose requests the fleet observes): for accounting, not for sending.
func (ep *Endpoint) Adopt(id string) *Session { return &Session{ep: ep, ID: id} }

// SessionIDChanged counts the replies that named a session id other than the one sent.
func (ep *Endpoint) SessionIDChanged() int64 { return ep.idChanged.Load() }

// ReadEvents parses an SSE body, refusing events larger than maxEvent bytes.
func ReadEvents(body io.Reader, maxEvent int) iter.Seq2[Event, error] {
	return readEvents(body, maxEvent, nil)
}
