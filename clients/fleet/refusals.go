package fleet

import (
	"net/http"
	"time"

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
// 400 the workload does not list as a dead status.
func (f *Fleet) refusedStream(status int) bool {
	return status == http.StatusConflict || status == http.StatusBadRequest && !f.dead(status)
}

// streamAnswered counts the answer status to a GET stream of h's session (0: no answer).
func (c *Client) streamAnswered(h *held, status int) {
	switch {
	case h == nil || status == 0:
	case c.f.refusedStream(status):
		c.f.rec.Inc(metrics.ReconnectsRefused)
		h.refusedSince.CompareAndSwap(0, time.Now().UnixNano())
	case status == http.StatusOK:
		if since := h.refusedSince.Swap(0); since != 0 {
			c.f.rec.Record(metrics.RefusalDuration, c.idx, time.Since(time.Unix(0, since)))
		}
	}
}
