package refserver

import (
	"fmt"
	"io"
	"slices"
)

// The keep-alive shapes (Config.KeepaliveShape): what an open stream gets every
// Config.Keepalive. Servers in the wild differ here, and client libraries treat the shapes
// differently: a comment is invisible to the application, a named event is dispatched (or not)
// by its type, and an event without id: carries data but no cursor, which a client that counts
// progress by cursor takes for no progress at all.
const (
	// KeepaliveComment is the SSE comment `: ping`: no event is dispatched. The default shape
	// when Keepalive is set.
	KeepaliveComment = "comment"
	// KeepaliveEvent is a named `event: ping` carrying data (a notifications/message), no id:.
	KeepaliveEvent = "event"
	// KeepaliveNoID is a message event (no event: field) carrying a notifications/message and
	// no id: line, so the stream's cursor does not move.
	KeepaliveNoID = "no-id"
	// KeepaliveNone sends nothing, whatever the interval: what most servers do, and what
	// exposes an idle stream to a load balancer's idle cutoff.
	KeepaliveNone = "none"
)

// KeepaliveShapes lists the shapes, the one meant by Keepalive alone (comment) first.
func KeepaliveShapes() []string {
	return []string{KeepaliveComment, KeepaliveEvent, KeepaliveNoID, KeepaliveNone}
}

// keepaliveData is the data of the event and no-id shapes: a logging notification, so that a
// client which dispatches it as a message (one that ignores the event type, or any client for
// no-id) gets a valid MCP message rather than a parse error.
const keepaliveData = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"` + ServerName + `","data":"keepalive"}}`

// keepaliveBytes is what one keep-alive of the shape puts on the wire; nil for none.
func keepaliveBytes(shape string) []byte {
	switch shape {
	case KeepaliveComment, "":
		return []byte(": ping\n\n")
	case KeepaliveEvent:
		return []byte("event: ping\ndata: " + keepaliveData + "\n\n")
	case KeepaliveNoID:
		return []byte("data: " + keepaliveData + "\n\n")
	}
	return nil
}

// keepaliveOn says whether the ticker sends keep-alives at all.
func (c Config) keepaliveOn() bool {
	return c.Keepalive > 0 && c.KeepaliveShape != KeepaliveNone
}

// validateKeepalive reports a shape the server does not know, or one that needs an interval.
func (c Config) validateKeepalive() error {
	switch {
	case c.KeepaliveShape != "" && !slices.Contains(KeepaliveShapes(), c.KeepaliveShape):
		return fmt.Errorf("keepalive shape %q: want one of %v", c.KeepaliveShape, KeepaliveShapes())
	case c.KeepaliveShape != "" && c.KeepaliveShape != KeepaliveNone && c.Keepalive <= 0:
		return fmt.Errorf("keepalive shape %q needs an interval (keepalive > 0)", c.KeepaliveShape)
	}
	return nil
}

// writeKeepalive writes one keep-alive: ka is the server's, built once from its shape (nil, for
// none, writes nothing).
func writeKeepalive(w io.Writer, ka []byte) error {
	if ka == nil {
		return nil
	}
	_, err := w.Write(ka)
	return err
}
