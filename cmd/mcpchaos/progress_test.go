package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A progress row fits an 80-column terminal with every figure, however large the numbers.
func TestProgressRowFits80Columns(t *testing.T) {
	for _, g := range []groupStatus{
		{Name: "naive", Live: 25, BelievedLiveButDead: 25, Misattributed: 50, Errors: map[string]int64{"connect": 125, "reset": 50}},
		{Name: "a-very-long-group-name", Live: 123456, Reconnecting: 123456, BelievedLiveButDead: 123456, DeadDetected: 1234567, Misattributed: 1234567,
			Errors: map[string]int64{"connect": 1234567, "reset": 1234567, "timeout": 1234567, "status": 1234567, "protocol": 1234567}},
	} {
		l := g.line(len(g.Name))
		if n := utf8.RuneCountInString(l); n > rowWidth {
			t.Errorf("%d columns: %q", n, l)
		}
		for _, want := range []string{"live ", "rec ", "false-live ", "det ", "misattr ", "err "} {
			if !strings.Contains(l, want) {
				t.Errorf("%q lacks %q", l, want)
			}
		}
	}
	g := groupStatus{Name: "naive", Live: 25, Misattributed: 50, Errors: map[string]int64{"connect": 125, "reset": 50}}
	rows := lines([]groupStatus{g, {Name: "probe"}})
	if want := "naive live 25 rec 0 false-live 0 det 0 misattr 50 err 175 connect:125 reset:50"; rows[0] != want {
		t.Errorf("row %q, want %q", rows[0], want)
	}
}

// While a run waits for its --start-at, the clock counts down instead of showing a negative time.
func TestClockBeforeStart(t *testing.T) {
	if got := clockLine(time.Now().Add(1500*time.Millisecond), 10*time.Second, 100*time.Millisecond); !strings.HasPrefix(got, "starts in 1.") || strings.Contains(got, "-") {
		t.Errorf("clock before the start: %q", got)
	}
	if got := clockLine(time.Now().Add(-2*time.Second), 10*time.Second, time.Second); got != "2s / 10s" {
		t.Errorf("clock after the start: %q", got)
	}
}

// --progress json lines carry the time and the elapsed seconds; --progress bars off a terminal
// says it cannot draw bars.
func TestProgressModesOffTerminal(t *testing.T) {
	src := func() []groupStatus { return []groupStatus{{Name: "naive", Live: 3}} }
	var buf bytes.Buffer
	stop := startProgress("bars", &buf, time.Now(), time.Second, src, nil, nil)
	stop()
	if !strings.Contains(buf.String(), "--progress bars needs a terminal") {
		t.Errorf("bars off a terminal: %q", buf.String())
	}
	line := statusLine{Time: time.Date(2026, 12, 2, 17, 45, 10, 0, time.UTC), ElapsedS: 1.5, Groups: src()}
	b, _ := json.Marshal(line)
	if want := `{"time":"2026-12-02T17:45:10Z","elapsed_s":1.5,"groups":[{"name":"naive","live":3,"reconnecting":0,"believed_live_but_dead":0,"dead_detected":0,"misattributed":0}]}`; string(b) != want {
		t.Errorf("json line %s, want %s", b, want)
	}
}
