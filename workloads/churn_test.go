package workloads

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// churnBuiltins are the session-leak workloads; TestBuiltins counts them as covered here.
var churnBuiltins = []string{"session-churn", "session-churn-fast"}

const churnPhases = `phases:
  - name: a
    duration: 1s
    calls: true
  - name: wait
    duration: ttl+2s
    calls: true
`

func churnWorkload(t *testing.T, churn string) string {
	t.Helper()
	src := edit(t, "phases:\n  - name: a\n    duration: 1s\n    calls: true\n", churnPhases)
	return strings.Replace(src, "    policy: naive\n", "    policy: naive\n"+churn, 1)
}

func TestChurnParses(t *testing.T) {
	w, err := Parse("c.yaml", []byte(churnWorkload(t, "    churn: {every: 200ms, abandon: 0.75, during: [a]}\n")))
	if err != nil {
		t.Fatal(err)
	}
	c := w.Groups[0].Churn
	if c == nil || c.Every != 200*time.Millisecond || c.Abandon != 0.75 || !slices.Equal(c.During, []string{"a"}) {
		t.Fatalf("churn = %+v", c)
	}
	on := w.ChurnOn(c)
	if !on(500*time.Millisecond) || on(1500*time.Millisecond) || on(time.Hour) {
		t.Errorf("ChurnOn: churns in a %v, in wait %v, after the end %v; want only in a", on(500*time.Millisecond), on(1500*time.Millisecond), on(time.Hour))
	}
	// Defaults: abandon 0 (every session DELETEd), churn in every phase.
	w, err = Parse("c.yaml", []byte(churnWorkload(t, "    churn: {every: 1s}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if c := w.Groups[0].Churn; c.Abandon != 0 || c.During != nil || w.ChurnOn(c) != nil {
		t.Errorf("churn defaults = %+v", c)
	}
	if w.Groups[0].Churn != nil && w.Groups[0].Churn.Every != time.Second {
		t.Errorf("every = %s", w.Groups[0].Churn.Every)
	}
}

func TestChurnErrors(t *testing.T) {
	tests := []struct {
		name  string
		churn string
		want  []wantErr
	}{
		{"every missing", "    churn: {abandon: 0.5}\n", []wantErr{
			{16, 12, "groups[0].churn.every", "{abandon", []string{"missing; set how long a client keeps a session"}}}},
		{"every too short", "    churn: {every: 1ms}\n", []wantErr{
			{16, 20, "groups[0].churn.every", "1ms", []string{"1ms is shorter than 100ms"}}}},
		{"abandon out of range", "    churn: {every: 1s, abandon: 2}\n", []wantErr{
			{16, 33, "groups[0].churn.abandon", "2", []string{"must be from 0 to 1, got 2"}}}},
		{"abandon not a number", "    churn: {every: 1s, abandon: most}\n", []wantErr{
			{16, 33, "groups[0].churn.abandon", "most", []string{`must be a number from 0 to 1, got the string "most"`}}}},
		{"unknown phase", "    churn: {every: 1s, during: [a, wiat]}\n", []wantErr{
			{16, 36, "groups[0].churn.during[1]", "wiat", []string{`no phase is named "wiat"; use one of a, wait`}}}},
		{"no phases", "    churn: {every: 1s, during: []}\n", []wantErr{
			{16, 32, "groups[0].churn.during", "[]", []string{"is empty, so clients would never churn"}}}},
		{"misspelt key", "    churn: {every: 1s, abandn: 0.5}\n", []wantErr{
			{16, 24, "groups[0].churn.abandn", "abandn", []string{`did you mean "abandon"?`}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := churnWorkload(t, tt.churn)
			_, err := Parse("c.yaml", []byte(src))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse = %v; want a *ValidationError", err)
			}
			if len(ve.Errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(ve.Errs), len(tt.want), err)
			}
			lines := strings.Split(src, "\n")
			for i, want := range tt.want {
				got := ve.Errs[i]
				if got.Line != want.line || got.Col != want.col || got.Field != want.field {
					t.Errorf("error at %d:%d field %q, want %d:%d field %q\n%v", got.Line, got.Col, got.Field, want.line, want.col, want.field, got)
				}
				if !strings.HasPrefix(textAt(lines, got.Line, got.Col), want.at) {
					t.Errorf("error points at %q, want %q", textAt(lines, got.Line, got.Col), want.at)
				}
				for _, m := range want.msg {
					if !strings.Contains(got.Msg, m) {
						t.Errorf("message %q lacks %q", got.Msg, m)
					}
				}
			}
		})
	}
}

// A workload changed in Go is held to the file's rules (Validate).
func TestChurnValidate(t *testing.T) {
	w, err := Parse("c.yaml", []byte(churnWorkload(t, "    churn: {every: 1s, during: [a]}\n")))
	if err != nil {
		t.Fatal(err)
	}
	c := *w
	c.Groups = slices.Clone(w.Groups)
	c.Groups[0].Churn = &Churn{Every: time.Millisecond, Abandon: 1.5, During: []string{"nosuch"}}
	err = c.Validate()
	for _, field := range []string{"groups[0].churn.every", "groups[0].churn.abandon", "groups[0].churn.during[0]"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate = %v; want it to name %s", err, field)
		}
	}
}

// The session-leak builtins churn, then wait a whole TTL with calls (so that the clients' last
// sessions live and the abandoned ones expire), long enough for the engine's check to judge:
// a TTL plus a second after the churn, and another second before the end.
func TestChurnBuiltins(t *testing.T) {
	for _, name := range churnBuiltins {
		w, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Phases) != 2 || !w.Phases[1].Calls {
			t.Fatalf("%s: phases %+v; want churn, then a wait with calls", name, w.Phases)
		}
		churnEnd, wait := w.Phases[0].End(), w.Phases[1]
		if wait.Duration < w.Target.SessionTTL+2*time.Second {
			t.Errorf("%s: the wait (%s) is shorter than the TTL (%s) and 2s", name, wait.Duration, w.Target.SessionTTL)
		}
		churns := 0
		for _, g := range w.Groups {
			if g.CallEvery >= w.Target.SessionTTL {
				t.Errorf("%s: group %s calls every %s, so its live sessions expire (TTL %s)", name, g.Name, g.CallEvery, w.Target.SessionTTL)
			}
			if g.Churn == nil {
				continue
			}
			churns++
			if g.Churn.Abandon <= 0 || g.Churn.Abandon >= 1 || !slices.Equal(g.Churn.During, []string{w.Phases[0].Name}) {
				t.Errorf("%s: group %s churns %+v; want a share abandoned, during the first phase only", name, g.Name, g.Churn)
			}
			if w.ChurnOn(g.Churn)(churnEnd) {
				t.Errorf("%s: group %s still churns after %s", name, g.Name, churnEnd)
			}
		}
		if churns == 0 {
			t.Errorf("%s: no group churns", name)
		}
		if strings.HasSuffix(name, "-fast") && w.Duration >= 20*time.Second {
			t.Errorf("%s lasts %s; a -fast workload must take under 20s", name, w.Duration)
		}
	}
}
