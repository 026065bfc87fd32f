package main

import (
	"slices"
	"testing"

	"github.com/mcpchaos/mcpchaos/shards"
)

// The shards of a --procs run get the run flags as given, each repeated one once a value, and
// none of those the parent keeps (its outputs, its progress view, its live endpoint).
func TestShardArgs(t *testing.T) {
	cmd := newRunCmd()
	if err := cmd.ParseFlags([]string{"--procs", "3", "--out", "x.json", "--progress", "off", "-q",
		"--metrics-addr", "127.0.0.1:9464", "--header", "A: ${TOKEN}", "--header", "B: 2",
		"--threshold", "probe.misattributed_errors == 0", "--http2", "--tool-args", `{"a":"b=c"}`}); err != nil {
		t.Fatal(err)
	}
	got := shards.FlagArgs(cmd.Flags())
	want := []string{"--header", "A: ${TOKEN}", "--header", "B: 2", "--http2=true",
		"--threshold", "probe.misattributed_errors == 0", `--tool-args={"a":"b=c"}`}
	if !slices.Equal(got, want) {
		t.Errorf("shards.FlagArgs = %q\nwant %q", got, want)
	}
	shard := newRunCmd() // what a shard makes of them
	if err := shard.ParseFlags(got); err != nil {
		t.Fatal(err)
	}
	if again := shards.FlagArgs(shard.Flags()); !slices.Equal(again, want) {
		t.Errorf("a shard reads them as %q", again)
	}
}
