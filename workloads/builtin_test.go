package workloads

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// fastGroups are the groups of every -fast builtin: the same clients and
// calls, only the policy differs.
func fastGroups() []GroupSpec {
	g := GroupSpec{Clients: 25, Ramp: 500 * ms, Retries: 3, RetryBackoff: 20 * ms, Probe: "ping",
		DeadStatuses: []int{404, 410}, CallEvery: 400 * ms, Tool: "echo", Concurrency: 2,
		RequestTimeout: 10 * time.Second, Protocol: "2025-11-25"}
	naive, probe := g, g
	naive.Name, naive.Policy = "naive", "naive"
	probe.Name, probe.Policy = "probe", "probe"
	return []GroupSpec{naive, probe}
}

func fastTarget(change func(*BuiltinTarget)) BuiltinTarget {
	b := BuiltinTarget{SessionTTL: 3 * time.Second, Retention: 8 * time.Second, RetentionEvents: 1024,
		GetValidation: "permissive", DeadStatus: 404, DeadBody: `{"error":"session expired"}`,
		UnknownCursorStatus: 400, NotifyInterval: 250 * ms, Retry: 200 * ms, PostResponse: "sse",
		Replicas: 1, Routing: "sticky", EventLog: "per-replica"}
	if change != nil {
		change(&b)
	}
	return b
}

var fastPhases = []Phase{
	{"active", 0, time.Second, true},
	{"quiet", time.Second, 6500 * ms, false}, // ttl+3.5s
	{"after-ttl", 7500 * ms, 2500 * ms, true},
}

var fastFaults = []Fault{
	{Name: "lb-idle-timeout", Toxic: "idle_timeout", Stream: "downstream",
		Attributes: map[string]any{"timeout": int64(100)}, At: 1200 * ms, For: 400 * ms},
	{Name: "proxy-restart", Toxic: "down", Stream: "downstream", Attributes: map[string]any{},
		At: 1800 * ms, For: 4200 * ms},
}

func TestBuiltins(t *testing.T) {
	realGroups := fastGroups()
	for i := range realGroups {
		realGroups[i].Ramp, realGroups[i].CallEvery, realGroups[i].RetryBackoff = 30*time.Second, 4*time.Minute, 2*time.Second
	}
	tests := []struct {
		name     string
		target   BuiltinTarget
		phases   []Phase
		groups   []GroupSpec
		faults   []Fault
		duration time.Duration
	}{
		{"seed-incident-fast", fastTarget(nil), fastPhases, fastGroups(), fastFaults, 10 * time.Second},
		{"strict-get-fast", fastTarget(func(b *BuiltinTarget) { b.GetValidation = "strict" }),
			fastPhases, fastGroups(), fastFaults, 10 * time.Second},
		{"short-retention-fast", fastTarget(func(b *BuiltinTarget) { b.Retention = time.Second }),
			fastPhases, fastGroups(), fastFaults, 10 * time.Second},
		{"seed-incident",
			BuiltinTarget{SessionTTL: 30 * time.Minute, Retention: 60 * time.Minute, RetentionEvents: 1024,
				GetValidation: "permissive", DeadStatus: 404, DeadBody: `{"error":"session expired"}`,
				UnknownCursorStatus: 400, NotifyInterval: 150 * time.Second, Retry: time.Minute, PostResponse: "sse",
				Replicas: 1, Routing: "sticky", EventLog: "per-replica"},
			[]Phase{
				{"active", 0, 10 * time.Minute, true},
				{"quiet", 10 * time.Minute, 65 * time.Minute, false}, // ttl+35m
				{"after-ttl", 75 * time.Minute, 25 * time.Minute, true},
			},
			realGroups,
			[]Fault{
				{Name: "lb-idle-timeout", Toxic: "idle_timeout", Stream: "downstream",
					Attributes: map[string]any{"timeout": int64(60000)}, At: 2 * time.Minute, For: 4 * time.Minute},
				{Name: "proxy-restart", Toxic: "down", Stream: "downstream", Attributes: map[string]any{},
					At: 18 * time.Minute, For: 42 * time.Minute},
			},
			100 * time.Minute},
	}
	var names []string
	for _, tt := range tests {
		names = append(names, tt.name)
		t.Run(tt.name, func(t *testing.T) {
			w, err := Builtin(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != tt.name || w.Source != "builtin:"+tt.name || w.Description == "" || !strings.HasPrefix(w.Hash, "sha256:") {
				t.Errorf("name %q source %q hash %q description %q", w.Name, w.Source, w.Hash, w.Description)
			}
			if *w.Target.Builtin != tt.target || w.Target.SessionTTL != tt.target.SessionTTL {
				t.Errorf("target = %+v\nwant %+v", *w.Target.Builtin, tt.target)
			}
			if !slices.Equal(w.Phases, tt.phases) {
				t.Errorf("phases = %+v\nwant %+v", w.Phases, tt.phases)
			}
			if !reflect.DeepEqual(w.Groups, tt.groups) {
				t.Errorf("groups = %+v\nwant %+v", w.Groups, tt.groups)
			}
			if len(w.Faults) != len(tt.faults) {
				t.Fatalf("faults = %+v", w.Faults)
			}
			for i, f := range w.Faults {
				want := tt.faults[i]
				if f.Name != want.Name || f.Toxic != want.Toxic || f.Stream != want.Stream || f.At != want.At ||
					f.For != want.For || len(f.Groups) != 0 || !mapsEqual(f.Attributes, want.Attributes) {
					t.Errorf("fault %d = %+v\nwant %+v", i, f, want)
				}
				if f.Until(w.Duration) > w.Duration {
					t.Errorf("fault %s ends after the run", f.Name)
				}
			}
			if w.Duration != tt.duration {
				t.Errorf("duration = %s, want %s", w.Duration, tt.duration)
			}
		})
	}
	names = append(names, releaseBuiltins...) // release_test.go
	names = append(names, churnBuiltins...)   // churn_test.go
	slices.Sort(names)
	if got := BuiltinNames(); !slices.Equal(got, names) {
		t.Errorf("BuiltinNames() = %v, want %v (each builtin needs a test case)", got, names)
	}
}

// The seed's shape: the proxy is down across the moment every session's TTL
// runs out (whether counted from its start or from its last call), and back
// before calls resume.
func TestBuiltinsKeepTheSeedShape(t *testing.T) {
	for _, name := range BuiltinNames() {
		if slices.Contains(releaseBuiltins, name) || slices.Contains(churnBuiltins, name) {
			continue // no seed there: their shape is checked in release_test.go and churn_test.go
		}
		w, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		var down Fault
		for _, f := range w.Faults {
			if f.Toxic == "down" {
				down = f
			}
		}
		active, after := w.Phases[0], w.Phases[len(w.Phases)-1]
		lastCall := active.End()
		if !(down.At > lastCall-w.Target.SessionTTL && down.At < w.Target.SessionTTL) ||
			down.Until(w.Duration) <= lastCall+w.Target.SessionTTL || down.Until(w.Duration) >= after.Start || !after.Calls {
			t.Errorf("%s: down %s..%s does not cover the TTL expiry (%s..%s) and end before calls resume at %s",
				name, down.At, down.Until(w.Duration), w.Target.SessionTTL, lastCall+w.Target.SessionTTL, after.Start)
		}
		if strings.HasSuffix(name, "-fast") && w.Duration >= 20*time.Second {
			t.Errorf("%s lasts %s; a -fast workload must take under 20s", name, w.Duration)
		}
	}
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestBuiltinUnknown(t *testing.T) {
	_, err := Builtin("nope")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !slices.Equal(nf.Builtins, BuiltinNames()) {
		t.Fatalf("got %v", err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	// A file named like a builtin wins over the builtin.
	if err := os.WriteFile("seed-incident-fast", []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Resolve("seed-incident-fast")
	if err != nil || w.Source != "seed-incident-fast" || w.Name != "t" {
		t.Fatalf("Resolve(file) = %+v, %v", w, err)
	}
	for _, arg := range []string{"builtin:seed-incident-fast", "strict-get-fast", "strict-get-fast.yaml"} {
		w, err := Resolve(arg)
		if err != nil || !strings.HasPrefix(w.Source, "builtin:") {
			t.Errorf("Resolve(%q) = %v, %v", arg, w, err)
		}
	}
	abs := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(abs, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := Resolve(abs); err != nil || w.Source != abs {
		t.Errorf("Resolve(%q) = %v, %v", abs, w, err)
	}
	_, err = Resolve("no-such-workload")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "seed-incident-fast, session-churn, session-churn-fast, short-retention-fast") {
		t.Errorf("Resolve(unknown) = %v", err)
	}
	if _, err := Resolve(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Resolve(dir) = %v", err)
	}
	// An invalid file is reported as such, not passed over for a builtin.
	if err := os.WriteFile("probe", []byte("name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := Resolve("probe"); !errors.As(err, &ve) {
		t.Errorf("Resolve(invalid file) = %v", err)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte(edit(t, "    clients: 1\n", "    clients: 0\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":11:14: groups[0].clients: ") {
		t.Errorf("Load(invalid) = %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v", err)
	}
	big := make([]byte, MaxFileSize+1)
	if _, err := Parse("big.yaml", big); err == nil || !strings.Contains(err.Error(), "big.yaml:1:1: file is larger than") {
		t.Errorf("Parse(big) = %v", err)
	}
	if _, err := Parse("bin.yaml", []byte("name: t\nx: \xff\n")); err == nil || !strings.Contains(err.Error(), "bin.yaml:2:4: file is not valid UTF-8") {
		t.Errorf("Parse(binary) = %v", err)
	}
}
