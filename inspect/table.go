package inspect

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the fingerprint for a person: the facts, then the verdict.
func WriteTable(w io.Writer, fp *Fingerprint) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("server", fp.URL)
	row("generation", fp.Generation)
	row("negotiated protocol", fp.NegotiatedProtocol)
	row("protocol eras", erasText(fp))
	if fp.Generation == "session" {
		row("session ids", yesNo(fp.SessionIDs))
		row("GET validates the session", boolText(fp.GetValidatesSession))
		killed := fp.DeadStatus.KilledBy
		if killed == "" {
			killed = "not killed"
		}
		row("dead session ("+killed+"): post / get / get+cursor / delete", strings.Join([]string{
			intText(fp.DeadStatus.Post), intText(fp.DeadStatus.Get), intText(fp.DeadStatus.GetWithCursor), intText(fp.DeadStatus.Delete)}, " / "))
		cursor := fp.CursorVia
		if cursor == "" {
			cursor = "none came"
		}
		row("cursor from", cursor)
		row("replay after death", boolText(fp.ReplayAfterDeath))
		row("cross-session replay", boolText(fp.CrossSessionReplay))
		row("silent substitution", boolText(fp.SilentSubstitution))
		for _, m := range []string{"ping", "tools/list"} {
			pm, ok := fp.ProbeMethods[m]
			if !ok {
				row("probe "+m, "unknown")
				continue
			}
			row("probe "+m+" on a dead session", fmt.Sprintf("%s (valid probe: %s)", intText(pm.DeadStatus), boolText(pm.Valid)))
		}
		if d := fp.AfterTTL; d != nil {
			expired := yesNo(d.Expired)
			if d.ExpiryUnseen {
				expired = "unknown (the server serves any id: a session it swept is served as a new one)"
			}
			row("after the TTL: expired", expired)
			if d.Expired {
				row("after the TTL: post / get / get+cursor", strings.Join([]string{intText(d.Post), intText(d.Get), intText(d.GetWithCursor)}, " / "))
				row("after the TTL: replay after death", boolText(d.ReplayAfterDeath))
			}
		}
		row("open stream holds the session", boolText(fp.OpenStreamHoldsSession))
		if fp.AfterTTL != nil {
			mode := fp.TTLMode
			if mode == "" {
				mode = "unknown"
			}
			row("ttl mode (activity keeps a session)", mode)
		}
		row("stream keepalive", keepaliveText(fp))
		if len(fp.ServerRequests) > 0 {
			row("server requests (answered)", fmt.Sprint(fp.ServerRequests))
		}
		row("request without a session id", intText(fp.MissingSessionStatus))
		row("second GET stream of a session", intText(fp.DuplicateGetStatus))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, c := range fp.ServerConduct {
		fmt.Fprintf(w, "problem: %s\n", c)
	}
	if len(fp.Verdict.Hazards) == 0 {
		fmt.Fprintln(w, "verdict: no hazard found")
	} else {
		fmt.Fprintf(w, "verdict: %d hazard(s)\n", len(fp.Verdict.Hazards))
		for _, h := range fp.Verdict.Hazards {
			fmt.Fprintf(w, "  - %s: %s\n", h.Name, h.Explanation)
		}
	}
	if fp.Generation == "session" && fp.SessionIDs {
		probe := fp.Verdict.Probe
		if probe == "" {
			probe = "(none is valid)"
		}
		fmt.Fprintf(w, "for a workload: probe: %s   dead_statuses: [%s]\n", probe, joinInts(fp.Verdict.DeadStatuses))
	}
	for _, n := range fp.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func boolText(b *bool) string {
	if b == nil {
		return "unknown"
	}
	return yesNo(*b)
}

func intText(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func keepaliveText(fp *Fingerprint) string {
	switch {
	case fp.StreamKeepaliveMS != nil:
		return fmtMS(*fp.StreamKeepaliveMS) + " (" + fp.KeepaliveKind + ")"
	case fp.KeepaliveWatchedMS == 0 && fp.KeepaliveSessionsDied > 0:
		return fmt.Sprintf("unknown: the %d sessions watched died of the TTL while watched (inspect's pings came late)", fp.KeepaliveSessionsDied)
	case fp.KeepaliveWatchedMS == 0:
		return "unknown (no GET stream)"
	case fp.StreamCutMS != nil:
		return fmt.Sprintf("unknown: an event over inspect's cap of %d bytes at %s ended the watch (the server did not close the stream)", maxEvent, fmtMS(*fp.StreamCutMS))
	case fp.StreamClosedMS != nil:
		return "unknown: the server closed the stream at " + fmtMS(*fp.StreamClosedMS) + ", nothing before"
	}
	return "none in " + fmtMS(fp.KeepaliveWatchedMS)
}

// erasText says which protocol eras the server speaks and which it prefers: "session
// (2025-11-25, 2025-06-18, 2025-03-26) and stateless (2026-07-28); prefers 2026-07-28".
func erasText(fp *Fingerprint) string {
	if len(fp.SupportedVersions) == 0 {
		if len(fp.Eras) == 0 {
			return "unknown"
		}
		return strings.Join(fp.Eras, " and ") + " (server/discover not answered)"
	}
	var session, stateless []string
	for _, v := range fp.SupportedVersions {
		if v == "2026-07-28" {
			stateless = append(stateless, v)
		} else {
			session = append(session, v)
		}
	}
	var parts []string
	if len(session) > 0 && slices.Contains(fp.Eras, "session") {
		parts = append(parts, "session ("+strings.Join(session, ", ")+")")
	}
	if len(stateless) > 0 {
		parts = append(parts, "stateless ("+strings.Join(stateless, ", ")+")")
	}
	return strings.Join(parts, " and ") + "; prefers " + fp.PreferredProtocol
}
