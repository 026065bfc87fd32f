package refserver

import (
	"testing"
	"time"
)

// The server counts the executions of each logical call its clients name (mcpwire.CallKey):
// the second run of a call is counted against the group that named it; a call without a key,
// or a tool call refused, is not.
func TestRunTwice(t *testing.T) {
	srv, url := serve(t, Config{SessionTTL: time.Minute, Retention: 2 * time.Minute}.WithDefaults())
	c := mustInit(t, url)
	call := func(key string) {
		meta := map[string]any{}
		if key != "" {
			meta["io.mcpchaos/call"] = key
		}
		c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "_meta": meta})
	}
	call("probe/0/1")
	call("probe/0/1") // a retry of the same call
	call("probe/0/2")
	call("naive/3/1")
	call("naive/3/1")
	call("naive/3/1")
	call("")
	call("")
	c.call("tools/call", map[string]any{"name": "nope", "_meta": map[string]any{"io.mcpchaos/call": "probe/0/1"}})
	got := srv.RunTwice()
	if got.ByGroup["probe"] != 1 || got.ByGroup["naive"] != 2 || len(got.ByGroup) != 2 || got.Partial {
		t.Errorf("RunTwice = %+v, want probe 1, naive 2", got)
	}
}
