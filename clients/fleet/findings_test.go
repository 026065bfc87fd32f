package fleet

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// A protocol violation the run measured around (one replayed `data: {}` among answered calls)
// is a finding, named with its counter, and never a problem: two identical runs, one that met
// it and one that did not, exit alike. Where it broke the calls themselves it is the problem
// that says why the run measured nothing, and no finding.
func TestProtocolViolationIsAFindingUnlessItBrokeTheCalls(t *testing.T) {
	outcome := func(name string, ok, failed, refused, protocol int64, sample string) Outcome {
		s := metrics.NewRecorder(name, "naive", 1).Snapshot()
		s.Counters[metrics.ToolCallsOK], s.Counters[metrics.ToolCallsFailed] = ok, failed
		s.Errors[metrics.ErrProtocol] = protocol
		return Outcome{Name: name, Snapshot: s, Report: Report{CallsSent: ok + failed, CallsDue: ok + failed, RefusedCalls: refused, ErrorSamples: []string{sample}}}
	}
	replayed := outcome("naive", 80, 0, 0, 1, `protocol: GET stream event: invalid message version tag ""`)
	clean := outcome("naive", 80, 0, 0, 0, "")
	broken := outcome("broken", 0, 6, 6, 6, "protocol: reply to tools/call: this is not JSON")

	for _, g := range []Outcome{replayed, clean} {
		if p := Problems([]Outcome{g}, false); len(p) != 0 {
			t.Errorf("%d protocol errors among answered calls made a problem: %q", g.Snapshot.Errors[metrics.ErrProtocol], p)
		}
	}
	f := strings.Join(Findings([]Outcome{replayed}), "\n")
	for _, w := range []string{"group naive: protocol_violation: the server broke the protocol 1 times", "invalid message version tag", "errors.protocol", "naive.errors.protocol == 0"} {
		if !strings.Contains(f, w) {
			t.Errorf("the finding lacks %q:\n%s", w, f)
		}
	}
	if f := Findings([]Outcome{clean}); len(f) != 0 {
		t.Errorf("findings without a violation: %q", f)
	}
	if p := strings.Join(Problems([]Outcome{broken}, false), "\n"); !strings.Contains(p, "group broken: the server broke the protocol (a reply that is not JSON-RPC or SSE, a wrong id or content type) 6 times") {
		t.Errorf("a server whose every reply broke the protocol is no problem:\n%s", p)
	}
	if f := Findings([]Outcome{broken}); len(f) != 0 {
		t.Errorf("a problem was also said as a finding: %q", f)
	}
}
