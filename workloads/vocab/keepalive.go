package vocab

// The reference server's keep-alive shapes (a workload's target.builtin.keepalive.shape): an SSE
// comment `: ping` (what a bare keepalive: DURATION sends), a named `event: ping` with data, a
// data event without id: (which does not move a client's cursor), or nothing at all.
const (
	KeepaliveComment = "comment"
	KeepaliveEvent   = "event"
	KeepaliveNoID    = "no-id"
	KeepaliveNone    = "none"
)

// KeepaliveShapes lists the keep-alive shapes; the first is the default of a keepalive mapping
// that names no shape.
func KeepaliveShapes() []string {
	return []string{KeepaliveComment, KeepaliveEvent, KeepaliveNoID, KeepaliveNone}
}
