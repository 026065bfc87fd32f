package inspect

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// conduct names what the server did (wire.Conduct: statuses, encodings, event ids, retry,
// events over the cap, resets inside events), then its protocol violations, as the first
// problem lines of the table. Facts drawn from answers the conduct makes garbage are unknown,
// not hazards: event ids that repeat, go backwards or empty cannot be replayed from, so what a
// replay "delivered" says nothing of the session.
func (fp *Fingerprint) conduct(c *wire.Conduct) {
	for _, l := range c.Lines() {
		fp.ServerConduct = append(fp.ServerConduct, l.Text)
		if l.Behaviour == wire.ChaoticIDs {
			fp.ReplayAfterDeath, fp.CrossSessionReplay = nil, nil
			if fp.AfterTTL != nil {
				fp.AfterTTL.ReplayAfterDeath = nil
			}
			fp.Notes = append(fp.Notes, "replay_after_death and cross_session_replay are unknown: the server's event ids are chaotic, so no cursor names a place to replay from")
		}
	}
	if n := len(fp.ProtocolViolations); n > 0 {
		count := fmt.Sprint(n)
		if n >= maxViolations {
			count += " or more"
		}
		fp.ServerConduct = append(fp.ServerConduct, fmt.Sprintf("the server answered %s request(s) with what the protocol does not allow (first: %s)", count, fp.ProtocolViolations[0]))
	}
}
