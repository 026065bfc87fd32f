package wire

import (
	"encoding/json"
	"testing"

	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

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
