package policy

import (
	"errors"
	"testing"
)

// The seed's decision rule, branch by branch, for both policies.
func TestAfterReplay(t *testing.T) {
	live := ProbeResult{Status: 200}
	dead := ProbeResult{Status: 404, Dead: true}
	odd := ProbeResult{Status: 503}
	broken := ProbeResult{Err: errors.New("connection refused")}
	cases := []struct {
		name   string
		replay Replay
		probe  *ProbeResult // nil: the policy must not probe
		naive  ReplayDecision
		probeV ReplayDecision
	}{
		{"replay 200, probe 200: live", Replay{Status: 200}, &live, Resume, Resume},
		{"replay 200, probe dead: the replay lied", Replay{Status: 200}, &dead, Resume, Teardown},
		{"replay 200, probe 503: ambiguous", Replay{Status: 200}, &odd, Resume, Ambiguous},
		{"replay 200, probe failed: ambiguous", Replay{Status: 200}, &broken, Resume, Ambiguous},
		{"replay dead: transport-layer death, no probe", Replay{Status: 404, Dead: true}, nil, Teardown, Teardown},
		{"replay 410 dead, no probe", Replay{Status: 410, Dead: true}, nil, Teardown, Teardown},
		{"cursor refused, session live: resync", Replay{Status: 400}, &live, Resync, Resync},
		{"cursor refused, session dead: teardown", Replay{Status: 400}, &dead, Resync, Teardown},
		{"cursor refused, probe 503: ambiguous", Replay{Status: 400}, &odd, Resync, Ambiguous},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []Policy{Naive{Retries: 3}, Probe{Retries: 3}} {
				probes := 0
				v := p.AfterReplay(tc.replay, func() ProbeResult {
					probes++
					if tc.probe == nil {
						t.Fatalf("%s probed when the rule says no probe", p.Name())
					}
					return *tc.probe
				})
				want := tc.naive
				if p.Name() == "probe" {
					want = tc.probeV
					if tc.probe != nil && probes != 1 {
						t.Errorf("probe policy sent %d probes, want exactly 1", probes)
					}
				} else if probes != 0 {
					t.Errorf("naive policy probed")
				}
				if v != want {
					t.Errorf("%s: verdict %s, want %s", p.Name(), v, want)
				}
			}
		})
	}
}

func TestAfterFailure(t *testing.T) {
	naive, probe := Naive{Retries: 3}, Probe{Retries: 3}
	for attempt := 1; attempt <= 3; attempt++ {
		if a := naive.AfterFailure(Failure{Attempt: attempt, Status: 404, Dead: true}); a != Retry {
			t.Errorf("naive attempt %d on 404: %v, want Retry (it blames the tool)", attempt, a)
		}
	}
	if a := naive.AfterFailure(Failure{Attempt: 4, Status: 404, Dead: true}); a != SurfaceFailure {
		t.Errorf("naive after 3 retries: %v, want SurfaceFailure", a)
	}
	if a := probe.AfterFailure(Failure{Attempt: 1, Status: 404, Dead: true}); a != SessionDead {
		t.Errorf("probe on a dead status: %v, want SessionDead", a)
	}
	if a := probe.AfterFailure(Failure{Attempt: 1, Status: 503}); a != Retry {
		t.Errorf("probe on 503: %v, want Retry", a)
	}
	if a := probe.AfterFailure(Failure{Attempt: 4, Status: 503}); a != SurfaceFailure {
		t.Errorf("probe on 503 after retries: %v, want SurfaceFailure", a)
	}
}

func TestNewPolicy(t *testing.T) {
	if _, err := New("optimistic", Config{}); err == nil {
		t.Fatal("unknown policy accepted")
	}
	p, err := New("probe", Config{Retries: 2})
	if err != nil || p.Name() != "probe" || !p.SharesSession() {
		t.Fatalf("New(probe) = %v, %v", p, err)
	}
}
