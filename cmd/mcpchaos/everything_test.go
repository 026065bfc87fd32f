package main

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/peers"
)

// The official everything server (npm, on loopback) keeps every session until a DELETE and
// answers 400 only to an id it does not know; its GET stream sends its headers at once. Its own
// record (internal/peers: sessions initialized and forgotten, resumes, every status it answered
// and why, the events its GET streams carried) is what the built-in demo's figures must match
// when the run is told --session-ttl none: no session died, so none is counted dead, detected,
// estimated or blamed on a 400 the clients never met; every session, replay and refusal the run
// counts is one the server saw. The demo's outage (proxy-restart, 1.8 s to 6 s) reaches into
// its last calls phase there (phases that wait for the TTL last only their offset), so turns
// pass without a live session: what the workload asked for, said in a note, not a problem.
//
// Its event store replays the priming events ("{}", not JSON-RPC) of every stream after the
// cursor, and a naive client that applies one has met a protocol breach; how many replays
// reach back over a priming event depends on the machine's timing. Each is a counted finding
// (errors.protocol, run.findings), never the run's exit status: identical runs exit alike.
func TestRunEverythingServerRecord(t *testing.T) {
	srv := peers.Everything(t)
	out, code, exp := cli(t, "run", "seed-incident-fast", "--target", srv.URL, "--session-ttl", "none")
	st := srv.Stats()
	defer func() {
		if t.Failed() && exp != nil {
			for _, g := range exp.Groups {
				t.Logf("group %s: %v errors %v", g.Name, g.Counters, g.Errors)
			}
			t.Logf("notes: %q", exp.Run.Notes)
		}
		t.Logf("the server's record: %+v", st)
	}()
	if exp == nil {
		t.Fatalf("exit %d, no export:\n%s", code, out)
	}
	var protocolErrs int64
	for _, g := range exp.Groups {
		protocolErrs += g.Errors["protocol"]
	}
	if code != exitOK {
		// A runner too busy to start the clients before the demo's faults (node and the run
		// share 2 cores with other jobs) makes the run incomplete, said so; no other cause may
		// fail it, and an incomplete run's figures are not the server's to check.
		late := false
		for _, line := range strings.Split(out, "\n") {
			if p, ok := strings.CutPrefix(line, "problem: "); ok {
				if !strings.Contains(p, "came before their client's first session was live") {
					t.Fatalf("exit %d for a cause other than a late start (a replayed priming event is a finding, not a failed run): %s\n%s", code, p, out)
				}
				late = true
			}
		}
		if code != exitRuntime || !late {
			t.Fatalf("exit %d without a problem line:\n%s", code, out)
		}
		t.Skipf("inconclusive: the runner started the clients late, and the run says so (exit 1, incomplete)")
	}
	findings := strings.Join(exp.Run.Findings, "\n")
	switch {
	case protocolErrs > st.GetEventsNotJSONRPC:
		t.Errorf("%d protocol errors; the server's GET streams carried only %d events that are not JSON-RPC", protocolErrs, st.GetEventsNotJSONRPC)
	case protocolErrs > 0 && !strings.Contains(findings, "protocol_violation: the server broke the protocol"):
		t.Errorf("%d protocol errors and no finding names them: %q", protocolErrs, exp.Run.Findings)
	case protocolErrs > 0 && !strings.Contains(out, "finding: group "):
		t.Errorf("the summary does not print the finding:\n%s", out)
	case protocolErrs == 0 && findings != "":
		t.Errorf("findings without a protocol error: %q", exp.Run.Findings)
	}
	if strings.Contains(out, "answered 400 to dead sessions") {
		t.Errorf("the run blames a 400 the server never answered a session of the run:\n%s", out)
	}

	var started, replays, statusErrs, cuts int64
	for _, g := range exp.Groups {
		c := g.Counters
		started += c["sessions_started"]
		replays += c["replays_ok"]
		statusErrs += g.Errors["status"]
		cuts += g.Errors["reset"] + g.Errors["timeout"] + g.Errors["other"]
		for _, m := range []string{"sessions_dead", "sessions_dead_detected", "replays_dead", "dead_session_requests", "misattributed_errors"} {
			if c[m] != 0 {
				t.Errorf("group %s: %s = %d, yet the server forgot no session but those the run DELETEd", g.Name, m, c[m])
			}
		}
		if g.FalseHealthySeconds != 0 || g.Histograms["detection_delay"].Count != 0 {
			t.Errorf("group %s: a death was estimated on a server declared without a TTL", g.Name)
		}
	}

	// Sessions: the server forgot only those DELETEd (a request the proxy delivered after its
	// session's DELETE gets 400 "forgotten"; a session refused as unknown while never
	// forgotten would be one it lost without a word). It initialized the run's sessions, the
	// preflight's one, and those whose initialize the demo's faults cut on its way back (the
	// client never learnt of them: each is a reset or timeout of its group; on a server
	// without a TTL they stay until it restarts).
	if st.SessionsForgotten != st.Deletes {
		t.Errorf("the server forgot %d sessions but received %d DELETEs", st.SessionsForgotten, st.Deletes)
	}
	for why, n := range st.Refusals {
		if strings.Contains(why, " live: ") && strings.Contains(why, "No valid session ID") {
			t.Errorf("the server refused %d requests of a session it never ended: %s", n, why)
		}
	}
	if started == 0 || st.SessionsInitialized < started+1 || st.SessionsInitialized > started+1+cuts {
		t.Errorf("the run counts %d sessions started (%d requests cut); the server initialized %d (the preflight's one included)", started, cuts, st.SessionsInitialized)
	}
	// Statuses: the preflight's made-up id got 400; every status error of a group is another
	// refusal the server answered.
	var refused int64
	for k, n := range st.Statuses {
		if !strings.HasSuffix(k, " 200") && !strings.HasSuffix(k, " 202") {
			refused += n
		}
	}
	if st.Statuses["POST 400"] == 0 || statusErrs > refused-1 {
		t.Errorf("the server answered %v; the run counts %d status errors", st.Statuses, statusErrs)
	}
	// Replays: every replay the run counts is a resume the server answered; a resume the run
	// does not count was cut on its way back.
	if replays > st.Resumes || st.Resumes-replays > cuts {
		t.Errorf("the run counts %d replays answered 200 (%d requests cut); the server answered %d resumes", replays, cuts, st.Resumes)
	}
	if st.GetStreams == 0 {
		t.Errorf("no GET stream opened on the server: %+v", st)
	}
}
