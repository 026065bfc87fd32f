package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/mcpwire"
)

// The listen stream of the stateless 2026-07-28 revision: a subscriptions/listen POST takes the
// place of the session family's GET stream. The server acknowledges first
// (notifications/subscriptions/acknowledged, with what it agreed to send), then pushes the
// notifications the client opted in to, and ends the stream with the request's result only
// when it closes it on purpose: a stream that ends without that result was cut (a disconnect),
// and whatever the server sent before the client listened again is lost (there is no
// resumption in this revision).

// ErrListenNotOffered says the server does not hold listen streams: it refused
// subscriptions/listen, answered it without a stream, or agreed to send nothing.
var ErrListenNotOffered = errors.New("the server offers no listen stream (subscriptions/listen)")

// Listen is one open subscriptions/listen stream.
type Listen struct {
	s      *Session
	id     jsonrpc.ID
	body   io.ReadCloser
	cancel context.CancelFunc
	retry  atomic.Int64
	// One parser reads the whole stream (the acknowledgement, then Read): a parser's buffer
	// may hold the start of the next event when the last one is handed out.
	next func() (Event, error, bool)
	stop func()
}

// Notification is one notification read on a listen stream.
type Notification struct {
	Method string
	// Seq is the server's number for it (mcpwire.NotificationSeq in its _meta: the reference
	// server numbers them), 0 when the server does not number its notifications.
	Seq uint64
}

// ListenEnd is how a listen stream ended.
type ListenEnd struct {
	// Completed: the server sent the listen request's result, ending the stream on purpose.
	// Otherwise the stream was cut (or ctx ended).
	Completed bool
	// Err is the read's error, nil when the connection closed cleanly.
	Err error
}

// Listen opens a listen stream asking for tools/list_changed notifications (the one kind every
// server with tools may send). It returns once the server acknowledged; ErrListenNotOffered
// (wrapped, with what the server said) when it does not hold such streams. ctx ends the
// stream; the request timeout bounds only the wait for the acknowledgement.
func (s *Session) Listen(ctx context.Context) (*Listen, error) {
	if !s.Stateless {
		return nil, fmt.Errorf("subscriptions/listen: %w in the session family (its GET stream serves instead)", ErrListenNotOffered)
	}
	params := map[string]any{"notifications": map[string]bool{"toolsListChanged": true}}
	msg, err := s.message("subscriptions/listen", params, true)
	if err != nil {
		return nil, err
	}
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	ack := time.AfterFunc(s.ep.RequestTimeout, cancel)
	resp, err := s.send(ctx, body, func(req *http.Request) { statelessHeaders(req, "subscriptions/listen", params) })
	if err != nil {
		ack.Stop()
		cancel()
		return nil, err
	}
	l := &Listen{s: s, id: msg.ID, body: resp.Body, cancel: cancel}
	l.retry.Store(-1)
	l.next, l.stop = iter.Pull2(readEvents(l.body, s.ep.MaxEvent, &l.retry))
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode >= 500 { // a server (or a proxy before it) failing now, not refusing
		err := &StatusError{Status: resp.StatusCode, Body: snippet(resp.Body)}
		ack.Stop()
		l.Close()
		return nil, fmt.Errorf("subscriptions/listen: %w", err)
	}
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		what := fmt.Sprintf("HTTP %d, %q: %s", resp.StatusCode, ct, snippet(resp.Body))
		ack.Stop()
		l.Close()
		return nil, fmt.Errorf("%w (%s)", ErrListenNotOffered, what)
	}
	err = l.awaitAck(ctx)
	if !ack.Stop() && err != nil {
		err = fmt.Errorf("subscriptions/listen: no acknowledgement within %v: %w", s.ep.RequestTimeout, context.DeadlineExceeded)
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// awaitAck reads the stream's first message, which must be the acknowledgement.
func (l *Listen) awaitAck(ctx context.Context) error {
	for ev, err, ok := l.next(); ok; ev, err, ok = l.next() {
		if err != nil {
			return ClassifyRead(err, l.s.ep.MaxEvent)
		}
		if ev.Data == "" {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Notifications map[string]bool `json:"notifications"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(ev.Data), &m) != nil {
			return &ProtocolError{Msg: "listen stream: an event that is not JSON-RPC: " + clip(ev.Data, 80)}
		}
		switch {
		case m.Method == "notifications/subscriptions/acknowledged" && m.Params.Notifications["toolsListChanged"]:
			return nil
		case m.Method == "notifications/subscriptions/acknowledged", m.ID != nil:
			return fmt.Errorf("%w (it agreed to send nothing asked for: %s)", ErrListenNotOffered, clip(ev.Data, 120))
		}
		return &ProtocolError{Msg: "listen stream: the first message is not the acknowledgement: " + clip(ev.Data, 80)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("listen stream ended before its acknowledgement: %w", io.ErrUnexpectedEOF)
}

// Read reads the stream until it ends (ctx ending ends it too), handing each notification to fn and answering the
// server's requests. It says how the stream ended.
func (l *Listen) Read(ctx context.Context, fn func(Notification)) ListenEnd {
	for ev, err, ok := l.next(); ok; ev, err, ok = l.next() {
		if err != nil {
			return ListenEnd{Err: ClassifyRead(err, l.s.ep.MaxEvent)}
		}
		if ev.Data == "" {
			continue
		}
		msg, derr := mcpwire.Decode([]byte(ev.Data))
		if derr != nil {
			return ListenEnd{Err: &ProtocolError{Msg: "listen stream: " + derr.Error()}}
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if m.ID == l.id {
				return ListenEnd{Completed: true}
			}
		case *jsonrpc.Request:
			if m.IsCall() {
				l.s.Answer(ctx, m)
				continue
			}
			fn(Notification{Method: m.Method, Seq: notificationSeq(m.Params)})
		}
	}
	return ListenEnd{Err: ctx.Err()}
}

// notificationSeq reads the server's number of a notification, 0 when it has none.
func notificationSeq(params json.RawMessage) uint64 {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return 0
	}
	var n uint64
	if json.Unmarshal(p.Meta[mcpwire.NotificationSeq], &n) != nil {
		return 0
	}
	return n
}

// Close ends the stream. Only the goroutine that opened and reads it may call it, after Read
// returned or instead of Read; others end a stream through the ctx it was opened with.
func (l *Listen) Close() {
	l.cancel()
	l.body.Close()
	l.stop()
}
