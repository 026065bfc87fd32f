package engine

import "testing"

// A built-in's tool is replaced only by one that says nothing destructive: the first that says
// it streams, else the first listed; none when every tool sounds destructive.
func TestSubstituteNeverDestructive(t *testing.T) {
	tool := func(name, desc string) toolInfo { return toolInfo{Name: name, Description: desc} }
	for _, tc := range []struct {
		tools []toolInfo
		want  string
	}{
		{[]toolInfo{tool("delete_order", ""), tool("lookup", "Look up an order"), tool("long_report", "reports progress")}, "long_report"},
		{[]toolInfo{tool("reset_db", ""), tool("purge", ""), tool("get", "read a record")}, "get"},
		{[]toolInfo{tool("stream_writer", "writes a file, streaming progress"), tool("echo", "")}, "echo"},
		{[]toolInfo{tool("notify", "Drop every table and notify")}, ""},
		{[]toolInfo{tool("remove_user", ""), tool("write_file", "")}, ""},
	} {
		pf := &preflight{tools: tc.tools}
		got := ""
		if k := pf.substitute(); k >= 0 {
			got = tc.tools[k].Name
		}
		if got != tc.want {
			t.Errorf("substitute among %v = %q, want %q", tc.tools, got, tc.want)
		}
	}
}

func TestForgeID(t *testing.T) {
	for id, want := range map[string]string{
		"mcp-session-0b4c": "mcp-session-0b40", "abc0": "abc1", "zzz": "", "": "",
	} {
		if got := forgeID(id); got != want {
			t.Errorf("forgeID(%q) = %q, want %q", id, got, want)
		}
	}
}
