package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpchaos/mcpchaos/metrics"
)

func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	body.Close()
}

func snippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 256))
	return string(b)
}

// StatusError is an HTTP status that is not a success.
type StatusError struct {
	Status int
	Body   string
	RPC    *jsonrpc.Error
}

func (e *StatusError) Error() string {
	if e.RPC != nil {
		return fmt.Sprintf("HTTP %d, JSON-RPC error %d: %s", e.Status, e.RPC.Code, e.RPC.Message)
	}
	return "HTTP " + strconv.Itoa(e.Status) + " " + e.Body
}

// ProtocolError is a reply that breaks the transport's rules.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "protocol: " + e.Msg }

// BadSessionIDError is a session id the client refuses to send back.
type BadSessionIDError struct{ Reason string }

func (e *BadSessionIDError) Error() string { return "bad session id: " + e.Reason }

// TooLargeError is a body or event over its cap.
type TooLargeError struct {
	What  string
	Limit int64
	// Size is how large it was, read on past the cap (bounded), when measured: exact when
	// Ended, else where the reading stopped.
	Size  int64
	Ended bool
}

func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("%s larger than its cap of %d bytes: %s", e.What, e.Limit, e.sizeText())
	}
	return fmt.Sprintf("%s larger than its cap of %d bytes", e.What, e.Limit)
}

// MidEventError is a read that broke off inside an SSE event (a reset, a body cut short).
type MidEventError struct{ Err error }

func (e *MidEventError) Error() string { return "in the middle of an SSE event: " + e.Err.Error() }
func (e *MidEventError) Unwrap() error { return e.Err }

// ClassifyRead names the error of a stream read: an event over maxEvent bytes is a
// TooLargeError.
func ClassifyRead(err error, maxEvent int) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &TooLargeError{What: "SSE event", Limit: int64(maxEvent)}
	}
	return err
}

// classifyRead is ClassifyRead that also notes, on c, an event over its cap (with its size,
// read on from body, bounded) and a connection broken inside an event.
func (c *Conduct) classifyRead(ctx context.Context, err error, body io.Reader, maxEvent int, what string) error {
	return c.midEvent(c.hugeEvent(ctx, ClassifyRead(err, maxEvent), body, maxEvent, what), what)
}

// classifyReadLater is classifyRead that does not wait to learn an event's size (inspect's).
func (c *Conduct) classifyReadLater(err error, body io.Reader, maxEvent int, what string) error {
	return c.midEvent(c.hugeEventLater(ClassifyRead(err, maxEvent), body, maxEvent, what), what)
}

// midEvent notes a connection that broke inside an event.
func (c *Conduct) midEvent(err error, what string) error {
	var me *MidEventError
	if errors.As(err, &me) && Kind(err) == metrics.ErrReset {
		c.note(ResetMidEvent, "%s: %v", what, me.Err)
	}
	return err
}

// OwnLimit says an error is the tool's own process running out of something the machine
// gives it (descriptors, local ports, socket buffers), not anything the server did: it is
// counted beside its kind (errors_own_limits; docs/metrics.md, "Whose errors").
func OwnLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.ENOBUFS)
}

// Count records a transport error on rec: its kind, and whether it was the tool's own limit.
func Count(rec *metrics.Recorder, err error) {
	rec.Error(Kind(err))
	if OwnLimit(err) {
		rec.Inc(metrics.ErrorsOwnLimits)
	}
}

// Kind classifies an error for the export's error counts.
func Kind(err error) metrics.ErrorKind {
	var (
		pe *ProtocolError
		te *TooLargeError
		se *StatusError
		re *RedirectError
		be *BadSessionIDError
		ne net.Error
	)
	switch {
	case errors.As(err, &re):
		return metrics.ErrRedirect
	case errors.As(err, &be):
		return metrics.ErrBadSessionID
	case errors.As(err, &te):
		return metrics.ErrTooLarge
	case errors.As(err, &pe):
		return metrics.ErrProtocol
	case errors.As(err, &se):
		return metrics.ErrStatus
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return metrics.ErrTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return metrics.ErrConnect
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.EPIPE):
		return metrics.ErrReset
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return metrics.ErrConnect
	}
	if strings.Contains(err.Error(), "server response headers exceeded") {
		return metrics.ErrTooLarge // net/http's MaxResponseHeaderBytes; its error is not exported
	}
	return metrics.ErrOther
}
