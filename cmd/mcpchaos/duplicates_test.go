package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/refserver"
)

// Calls run twice on a target given by URL: the reference server started on its own, as
// `mcpchaos serve` starts it (refserver.Start), and run against with --target. The server
// counts executions per logical call (the _meta name every tool call carries, the same on
// each retry and re-issue): a duplicate is its fact. The run by URL cannot read that count
// (calls_run_twice is listed as not observable, never shown as 0 measured), and what it does
// count agrees with the server's: in the stateless revision every call the server ran twice
// was a lost request re-issued; in the session family, a call retried after an outage cut it.
func TestRunDuplicatesReferenceServerByURL(t *testing.T) {
	// Replies as JSON: a reply streamed with event ids could be resumed after the cut (GET +
	// Last-Event-ID) without running the call again, so whether a cut call runs twice would
	// depend on when the cut came; a cut JSON reply is always sent again.
	inst, err := refserver.Start("127.0.0.1:0", refserver.Config{SessionTTL: time.Minute, SlowSteps: 4, SlowStep: 60 * time.Millisecond,
		PostResponse: refserver.PostJSON}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	for _, tc := range []struct{ group, protocol string }{
		{"stateless", ", protocol: 2026-07-28"},
		{"session", ""},
	} {
		t.Run(tc.group, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "w.yaml")
			os.WriteFile(p, fmt.Appendf(nil, `name: twice-by-url
target: {url: %s, session_ttl: none}
phases:
  - {name: calls, duration: 2500ms, calls: true}
groups:
  - {name: %s, clients: 4, policy: naive, tool: slow, call_every: 100ms, retries: 8, retry_backoff: 150ms, request_timeout: 3s%s}
faults:
  - {name: out, toxic: down, at: 800ms, for: 400ms}
`, inst.URL, tc.group, tc.protocol), 0o600)
			before := inst.Server.RunTwice().ByGroup[tc.group]
			out, _, exp := cli(t, "run", p)
			if exp == nil {
				t.Fatalf("no export:\n%s", out)
			}
			dups := inst.Server.RunTwice().ByGroup[tc.group] - before
			c := group(t, exp, tc.group).Counters
			t.Logf("the server ran %d calls again; the run: %v", dups, c)
			if dups == 0 {
				t.Fatalf("an outage cut slow calls in flight and they were sent again, yet the server ran none twice: %v", c)
			}
			if !slices.Contains(exp.Run.NotObservable[tc.group], "calls_run_twice") || c["calls_run_twice"] != 0 {
				t.Errorf("calls_run_twice by URL: %d, not observable %v: a run by URL cannot know the server's count", c["calls_run_twice"], exp.Run.NotObservable[tc.group])
			}
			if tc.group == "stateless" && (dups > c["requests_reissued"] || dups > c["requests_lost"]) {
				t.Errorf("the server ran %d calls twice; the run re-issued %d of %d lost: every duplicate must be a lost request re-issued",
					dups, c["requests_reissued"], c["requests_lost"])
			}
			if c["tool_calls_ok"] == 0 {
				t.Errorf("no call succeeded: %v", c)
			}
		})
	}
}
