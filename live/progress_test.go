package live

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"github.com/mcpchaos/mcpchaos/shards"
)

// A progress row fits an 80-column terminal with every figure, however large the numbers.
func TestProgressRowFits80Columns(t *testing.T) {
	for _, g := range []groupStatus{
		{Name: "naive", Live: 25, BelievedLiveButDead: 25, Misattributed: 50, Errors: map[string]int64{"connect": 125, "reset": 50}},
		{Name: "a-very-long-group-name", Live: 123456, Reconnecting: 123456, BelievedLiveButDead: 123456, DeadDetected: 1234567, Misattributed: 1234567,
			Errors: map[string]int64{"connect": 1234567, "reset": 1234567, "timeout": 1234567, "status": 1234567, "protocol": 1234567}},
	} {
		l := statusRow(&g, len(g.Name))
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
	stop := StartProgress("bars", &buf, time.Now(), time.Second, src, nil, nil)
	stop()
	if !strings.Contains(buf.String(), "--progress bars needs a terminal") {
		t.Errorf("bars off a terminal: %q", buf.String())
	}
	line := shards.Status{Time: time.Date(2026, 12, 2, 17, 45, 10, 0, time.UTC), ElapsedS: 1.5, Groups: src()}
	b, _ := json.Marshal(line)
	if want := `{"time":"2026-12-02T17:45:10Z","elapsed_s":1.5,"groups":[{"name":"naive","live":3,"reconnecting":0,"believed_live_but_dead":0,"dead_detected":0,"misattributed":0}]}`; string(b) != want {
		t.Errorf("json line %s, want %s", b, want)
	}
}

// --progress json is pure JSON Lines, one record a second, and a fault shorter than a second
// is named by the line whose second covers it (time is synctest's fake clock: exact).
func TestProgressJSONLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		src := func() []groupStatus { return []groupStatus{{Name: "naive", Live: 3}} }
		// The fault "blip" is in force from 1.2 s to 1.5 s: between two ticks.
		run := func(from, now time.Time) (string, []string) {
			a, b := start.Add(1200*time.Millisecond), start.Add(1500*time.Millisecond)
			if from.Before(b) && !now.Before(a) {
				return "active", []string{"blip"}
			}
			return "active", nil
		}
		var buf syncbuf.Buffer
		stop := StartProgress("json", &buf, start, 3*time.Second, src, run, nil)
		time.Sleep(3*time.Second + time.Millisecond)
		stop()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines in 3 s, want 3:\n%s", len(lines), buf.String())
		}
		for i, l := range lines {
			var st shards.Status
			if err := json.Unmarshal([]byte(l), &st); err != nil {
				t.Fatalf("line %d is not a JSON record: %v: %q", i+1, err, l)
			}
			if _, ok := shards.ParseStatus(l); !ok {
				t.Errorf("line %d: parseStatus refuses it", i+1)
			}
			if want := i == 1; slices.Contains(st.Faults, "blip") != want {
				t.Errorf("line %d (second %d): faults %v; blip in force from 1.2 s to 1.5 s", i+1, i+1, st.Faults)
			}
		}
		if _, ok := shards.ParseStatus("warning: the runner was starved"); ok {
			t.Error("parseStatus took a warning line for a status line")
		}
	})
}
