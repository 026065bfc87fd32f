package fleet

import (
	"net/http"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet/drive"
	"github.com/mcpchaos/mcpchaos/metrics"
)

// Reconnects refused as a stream already attached: a server that still holds a session's
// standalone GET stream (the zombie stream a proxy leaves when it loses the client's side:
// the half_open fault) refuses the client's reconnect, 409 from the Go and TS SDK servers, 400
// "session already exists" from a hosting platform, until its side of the old stream ends.
// Every kind counts it here, from the GETs it sees (the wire clients' reconnects, a library's
// requests through sdkObserver): reconnects_refused, and per session how long the refusal
// lasted, from the first refused to the first accepted (refusal_duration). A refusal still
// going on when the run ends is counted in reconnects_refused only.

// refusedStream says whether status answers a GET stream as one already attached: 409, or a
// 400 the workload does not list as a dead status to a GET without a cursor. A 400 to a resume
// (resumed: the GET carried Last-Event-ID) is the cursor's refusal, not the stream's: the Go
// SDK, mcp-go and the TS SDK answer so a cursor their store no longer holds (counted in
// replays_unknown_cursor), with no stream held at all. A server that answers 400 for a held
// stream refuses the plain GET that follows too, and is counted there.
func (f *Fleet) refusedStream(status int, resumed bool) bool {
	return status == http.StatusConflict || status == http.StatusBadRequest && !resumed && !f.env.Dead(status)
}

// StreamAnswered counts the answer status to a GET stream of h's session (0: no answer);
// resumed says the GET carried a cursor.
func (c *Client) StreamAnswered(h *drive.Held, status int, resumed bool) {
	switch {
	case h == nil || status == 0:
	case c.f.refusedStream(status, resumed):
		c.f.rec.Inc(metrics.ReconnectsRefused)
		h.Marks.RefusedSince.CompareAndSwap(0, time.Now().UnixNano())
	case status == http.StatusOK:
		if since := h.Marks.RefusedSince.Swap(0); since != 0 {
			c.f.rec.Record(metrics.RefusalDuration, c.idx, time.Since(time.Unix(0, since)))
		}
	}
}
