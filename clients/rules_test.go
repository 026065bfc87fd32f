package clients

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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

// A response must carry a result or an error, not both, and a result is an object.
func TestReplyValidation(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(3))
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`, true},
		{`{"jsonrpc":"2.0","id":3}`, false},
		{`{"jsonrpc":"2.0","id":3,"result":42}`, false},
		{`{"jsonrpc":"2.0","id":3,"result":null}`, false},
		{`{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{}}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress"}`, false},
	} {
		err := (&Reply{Status: 200}).take([]byte(tc.body), id)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.body, err)
		}
		if err != nil && Kind(err) != metrics.ErrProtocol {
			t.Errorf("%s: %v is not a protocol error", tc.body, err)
		}
	}
	r := &Reply{Status: 200, Result: json.RawMessage(`{"content":[],"isError":true}`)}
	if !r.ToolError() {
		t.Error("isError: true is not a tool error")
	}
}

// A client advertises only what it serves, and answers every server request.
func TestResponder(t *testing.T) {
	var none *Responder
	if caps := none.capabilities(); len(caps) != 0 {
		t.Errorf("no responder advertises %v", caps)
	}
	r := &Responder{Roots: []Root{{URI: "file:///srv"}}, Replies: map[string]json.RawMessage{MethodElicitation: json.RawMessage(`{"action":"decline"}`)}}
	caps := r.capabilities()
	if _, ok := caps["roots"]; !ok || caps["elicitation"] == nil || caps["sampling"] != nil {
		t.Errorf("capabilities %v", caps)
	}
	for m, wantErr := range map[string]bool{MethodPing: false, MethodRootsList: false, MethodElicitation: false, MethodSampling: true, "x/y": true} {
		_, e := r.reply(m)
		if (e != nil) != wantErr {
			t.Errorf("%s: error %v", m, e)
		}
	}
	if _, e := none.reply(MethodRootsList); e == nil {
		t.Error("roots/list answered without roots")
	}
}

// The estimate learns a dead status, keeps a death once past, counts a dead id served as alive
// apart from a refuted estimate, and forgets sessions the client is done with.
func TestEstimated(t *testing.T) {
	e := NewEstimated(time.Minute)
	now := time.Now()
	e.touch("a", now.Add(-2*time.Second), true)
	if _, dead := e.DeadSince("a"); dead {
		t.Fatal("dead within its TTL")
	}
	e.observeDead("a", now.Add(-time.Second))
	if d, dead := e.DeadSince("a"); !dead || !d.Equal(now.Add(-time.Second)) || e.source("a") != DeathObserved {
		t.Fatalf("after a dead status: %v %v %s", d, dead, e.source("a"))
	}
	e.touch("a", now, true)
	if e.ServedAfterDeath() != 1 {
		t.Errorf("a success after a dead status: served after death %d", e.ServedAfterDeath())
	}
	short := NewEstimated(time.Millisecond)
	short.touch("b", now.Add(-time.Second), true)
	if _, dead := short.DeadSince("b"); !dead || short.source("b") != DeathFromTTL {
		t.Fatal("not dead past its TTL")
	}
	short.touch("b", now, true)
	if _, dead := short.DeadSince("b"); !dead || short.Refuted() != 1 {
		t.Errorf("a success after an estimated death revived it, or was not noted: refuted %d", short.Refuted())
	}
	kept := NewEstimated(time.Millisecond)
	kept.Regime.OpenStreamKeepsAlive = true
	kept.touch("c", now.Add(-time.Second), true)
	kept.streamOpen("c", true, now.Add(-time.Second))
	if _, dead := kept.DeadSince("c"); dead {
		t.Error("dead while a stream that keeps it alive is open")
	}
	for i := range 100000 {
		id := "s" + strconv.Itoa(i)
		e.touch(id, now, true)
		e.forget(id)
	}
	if n := e.Held(); n > 2*maxEnded*truthShards+1 {
		t.Errorf("holds %d sessions after 100000 ended", n)
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
