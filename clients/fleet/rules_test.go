package fleet

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// Arguments built from a tool's inputSchema validate against it, whatever the schema asks.
func TestMinimalArgs(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"order_id":{"type":"string","minLength":1},"quantity":{"type":"integer","minimum":1},"priority":{"type":"string","enum":["low","high"]}},"required":["order_id","quantity"],"additionalProperties":false}`,
			`{"order_id":"mcpchaos","quantity":1}`},
		{`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"]}`, `{"steps":1}`},
		{`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"tags":{"type":"array","items":{"type":"string"},"minItems":2},"n":{"type":"number","exclusiveMinimum":0.5},"mode":{"const":"fast"},"d":{"type":"integer","default":7}},"required":["when","tags","n","mode","d"]}`,
			`{"d":7,"mode":"fast","n":1.5,"tags":["mcpchaos","mcpchaos"],"when":"2026-01-01T00:00:00Z"}`},
		{`{"type":"object","properties":{"code":{"type":"string","maxLength":3}},"required":["code"]}`, `{"code":"mcp"}`},
		{`{"type":"object"}`, `{}`},
		{``, `{}`},
	} {
		got, err := MinimalArgs(json.RawMessage(tc.schema))
		if err != nil {
			t.Errorf("%s: %v", tc.schema, err)
		}
		if b, _ := json.Marshal(got); string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.schema, b, tc.want)
		}
	}
	// A pattern it cannot satisfy: the arguments are sent all the same, and the error says
	// what to do.
	_, err := MinimalArgs(json.RawMessage(`{"type":"object","properties":{"sku":{"type":"string","pattern":"^[A-Z]{3}-[0-9]+$"}},"required":["sku"]}`))
	if err == nil || !strings.Contains(err.Error(), "arguments") {
		t.Errorf("unsatisfiable pattern: %v", err)
	}
}

func TestExpandArgs(t *testing.T) {
	in := map[string]any{"id": "o-{{client}}-{{seq}}", "n": "{{seq}}", "c": "{{client}}", "g": "{{group}}", "list": []any{"{{client}}"}, "x": 3}
	got, _ := json.Marshal(expandArgs(in, "probe", 4, 17))
	if want := `{"c":4,"g":"probe","id":"o-4-17","list":[4],"n":17,"x":3}`; string(got) != want {
		t.Errorf("%s, want %s", got, want)
	}
}
func TestProblems(t *testing.T) {
	snap := func(kv map[metrics.Counter]int64) *metrics.Snapshot {
		s := metrics.NewRecorder("g", "probe", 1).Snapshot()
		for k, v := range kv {
			s.Counters[k] = v
		}
		return s
	}
	healthy := Outcome{Name: "ok", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5, metrics.ToolCallsOK: 90, metrics.ToolCallsFailed: 10, metrics.MisattributedErrors: 10, metrics.ReplaysOK: 4, metrics.Drops: 5})}
	refused := Outcome{Name: "bad", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5, metrics.ToolCallsFailed: 340}), Report: Report{RefusedCalls: 340, ErrorSamples: []string{"JSON-RPC error -32602: unexpected additional properties [\"text\"]"}}}
	cut := Outcome{Name: "cut", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5, metrics.ToolCallsOK: 2, metrics.ToolCallsFailed: 9})}
	noCalls := Outcome{Name: "idle", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5})}
	// Calls were due and none was made: every turn skipped behind a call that never ended, or
	// impossible (arguments the client could not send).
	refusedAll := Outcome{Name: "stuck", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 4, metrics.CallsSkipped: 36}), Report: Report{CallsDue: 40, ErrorSamples: []string{"tools/list: the server offers no tool"}}}
	big := Outcome{Name: "big", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 2, metrics.ToolCallsOK: 10}), Report: Report{ErrorSamples: []string{"HTTP 500: oops", "SSE event larger than its cap of 1048576 bytes"}}}
	big.Snapshot.Errors[metrics.ErrTooLarge] = 3
	silent := Outcome{Name: "mute", Snapshot: snap(map[metrics.Counter]int64{}), Report: Report{CallsDue: 8}}
	noReplay := Outcome{Name: "blind", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5, metrics.ToolCallsOK: 10, metrics.Drops: 7})}
	for range 7 {
		_ = noReplay.Snapshot.Hists[metrics.ReconnectLatency].RecordValue(1000)
	}
	ended := Outcome{Name: "short", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5, metrics.ToolCallsOK: 10, metrics.Drops: 7})}
	liar := Outcome{Name: "liar", Snapshot: snap(map[metrics.Counter]int64{metrics.SessionsStarted: 5, metrics.ToolCallsOK: 10, metrics.ReplaysOK: 1}), Report: Report{ServedAfterDeath: 3}}
	for _, tc := range []struct {
		groups  []Outcome
		replays bool
		want    []string
	}{
		{[]Outcome{healthy}, true, nil},
		{[]Outcome{refused}, false, []string{"group bad: 340 of 340 tool calls were refused", "additional properties"}},
		{[]Outcome{cut}, false, nil},     // cut by faults: what was asked
		{[]Outcome{ended}, true, nil},    // dropped, never reconnected before the end
		{[]Outcome{noCalls}, false, nil}, // a workload may make no calls
		{[]Outcome{refusedAll, healthy}, false, []string{"group stuck: no tool call was made, though 40 were due (36 skipped", "(first: tools/list: the server offers no tool)"}},
		{[]Outcome{big}, false, []string{"group big: the server sent more than mcpchaos reads (a body, event, line or header block over its cap) 3 times (first: SSE event larger than its cap of 1048576 bytes)"}},
		{[]Outcome{silent}, false, []string{"group mute: no tool call was made, though 8 were due", "were the group's sessions ever started?"}},
		{[]Outcome{noReplay}, true, []string{"7 reconnects after drops but no replay in any group"}},
		{[]Outcome{noReplay}, false, nil},
		{[]Outcome{noReplay, healthy}, true, nil}, // one group replayed: the run measured it
		{[]Outcome{liar}, false, []string{"group liar: the target answered 3 requests with success for sessions it had answered as dead"}},
	} {
		got := strings.Join(Problems(tc.groups, tc.replays), "\n")
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: unexpected problems:\n%s", tc.groups[0].Name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems lack %q:\n%s", tc.groups[0].Name, w, got)
			}
		}
	}
}
