package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/fleet"
	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// schedule turns the workload's faults into the injector's schedule.
func (r *runner) schedule() []faults.Scheduled {
	var s []faults.Scheduled
	for _, f := range r.w.Faults {
		if f.Action != nil {
			continue // actions run beside the toxics (release.go)
		}
		var proxies []string
		for _, g := range r.w.Groups {
			if f.AppliesTo(g.Name) {
				proxies = append(proxies, g.Name)
			}
		}
		s = append(s, faults.Scheduled{
			Fault:   faults.Toxic{Name: f.Name, Type: f.Toxic, Stream: f.Stream, Attributes: f.Attributes},
			Proxies: proxies,
			At:      f.At,
			For:     f.For,
		})
	}
	return s
}

// noteFault records when each fault really went on and off each proxy.
func (r *runner) noteFault(c faults.Change) {
	if c.Added {
		r.log.added(faultAt{fault: c.Fault, proxy: c.Proxy, added: c.At, err: c.Err})
		return
	}
	r.log.removed(c.Fault, c.Proxy, c.At)
}

// export builds the export; problems go to run.error when fatal (the run could not measure
// what it was asked to), to run.notes otherwise (a target that went away and came back).
func (r *runner) export(start, end time.Time, interrupted bool, problems []string, fatal bool) (*results.Export, error) {
	run := results.Run{
		Tool:           "mcpchaos",
		ToolVersion:    r.opts.toolVersion,
		Workload:       r.w.Name,
		WorkloadSource: r.w.Source,
		WorkloadHash:   r.w.Hash,
		Start:          start,
		End:            end,
		PlannedSeconds: r.w.Duration.Seconds(),
		Interrupted:    interrupted,
		Proxies:        r.proxies,
		Shard:          r.exportedShard(),
	}
	run.ID, run.Labels = r.id, r.plan.Labels() // a copy: the export is the caller's to change
	if r.late > 0 && run.Shard != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("this shard started %s after the agreed start time: its clients ran the plan that much late", r.late.Round(time.Millisecond)))
	}
	r.describeTarget(&run)
	r.leakMu.Lock()
	run.SessionLeak = r.leak // leakcheck.go
	r.leakMu.Unlock()
	run.Notes = append(run.Notes, fleet.Notes(r.fleets)...)
	run.Findings = fleet.FindingsOf(r.fleets)
	if sh, ok := r.inj.(*faults.Shielded); ok && sh.Cuts() > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("the fault proxies cut %d client connections that stopped reading what the server sent (more than %d bytes unread, or closed mid-write), so that no stream could hold the fault schedule", sh.Cuts(), faults.ShieldBuffer))
	}
	if fatal {
		run.Error = joinProblems(problems)
	} else {
		run.Notes = append(run.Notes, problems...)
	}
	for _, f := range r.fleets {
		if p := f.Protocol(); p != "" {
			run.NegotiatedProtocol = p
			break
		}
	}
	snaps := make([]*metrics.Snapshot, len(r.recs))
	for i, rec := range r.recs {
		snaps[i] = rec.Snapshot()
	}
	exp, err := results.Build(run, snaps)
	if err != nil {
		return nil, err
	}
	decl := r.w.Target.SessionTTL
	if r.w.Target.NoSessionTTL {
		decl = 0
	}
	for i := range exp.Groups { // the overall numbers are the groups' (Tally again)
		exp.Groups[i].SessionTTL = results.DeclaredTTL(decl, r.w.Target.TTLMode)
	}
	if err := exp.Tally(); err != nil {
		return nil, err
	}
	exp.Faults, exp.Actions = r.log.exported()
	exp.Phases = phasesRun(r.w.Phases, end.Sub(start))
	r.phaseTurns(exp.Phases)
	r.exportRelease(exp)
	return exp, nil
}

// phasesRun is the phase timeline of a run that lasted ran: the phases that began before its
// end, the last cut at it (an interrupted or aborted run).
func phasesRun(phases []workloads.Phase, ran time.Duration) []results.PhaseAt {
	var out []results.PhaseAt
	for _, p := range phases {
		if p.Start >= ran {
			break
		}
		out = append(out, results.PhaseAt{Phase: p.Name, StartS: roundS(p.Start), EndS: roundS(min(p.End(), ran))})
	}
	return out
}

// phaseTurns adds to each phase with calls every group's turns and calls not made in it.
func (r *runner) phaseTurns(phases []results.PhaseAt) {
	for i, f := range r.fleets {
		for k, pt := range f.PhaseTurns() {
			if k >= len(phases) || !r.w.Phases[k].Calls {
				continue
			}
			ph := &phases[k]
			if ph.Turns == nil {
				ph.Turns, ph.CallsNotMade = map[string]int64{}, map[string]int64{}
			}
			g := r.w.Groups[i].Name
			// Turns before a client's first session are planned turns not made (latestarts.go).
			ph.Turns[g], ph.CallsNotMade[g] = pt.Turns+pt.NotStarted, pt.NotMade+pt.NotStarted
			if pt.NotStarted > 0 {
				if ph.CallsNotStarted == nil {
					ph.CallsNotStarted = map[string]int64{}
				}
				ph.CallsNotStarted[g] = pt.NotStarted
			}
		}
	}
}

// newRunID is a run's id: 8 hex digits, enough to tell the runs of a dashboard apart.
func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// noSessions says, for a target that has sessions, that none was ever established, and what
// the clients got instead ("" when some were).
func (r *runner) noSessions() string {
	if r.tgt.generation == wire.Stateless {
		return ""
	}
	// The counters' atomics, not Snapshot: merging every histogram here doubled the work
	// between the fleets' end and the export (seconds on a loaded machine).
	all := liveGroup(r.recs)
	if all.counter(metrics.SessionsStarted) > 0 || len(r.recs) == 0 {
		return ""
	}
	errs := all.errors()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, errs[k]))
	}
	got := "no answer at all"
	if len(parts) > 0 {
		got = "errors: " + strings.Join(parts, ", ")
	}
	return "no session was ever established: every initialize failed (" + got + "), so nothing was measured"
}

// failedExport is the export of a run that could not start (the target unreachable, its
// DNS name unknown, its certificate refused, the toxiproxy-server gone): every group at zero
// and run.error saying why; the error is a SetupError.
func (r *runner) failedExport(at time.Time, cause error) (*results.Export, error) {
	recs := make([]*metrics.Recorder, len(r.w.Groups))
	for i, g := range r.w.Groups {
		if i < len(r.recs) {
			recs[i] = r.recs[i]
		} else {
			recs[i] = metrics.NewRecorder(g.Name, g.Policy, g.Clients)
		}
	}
	r.recs = recs
	if r.tgt.label == "" {
		r.tgt.label = r.w.Target.URL
	}
	exp, err := r.export(at, time.Now(), false, []string{"could not start: " + cause.Error()}, true)
	if err != nil {
		return nil, errors.Join(&SetupError{cause}, err)
	}
	return exp, &SetupError{cause}
}

// exportedShard is how the export records the plan's shard: which one, the start time the
// shards agreed on, and how late this one came.
func (r *runner) exportedShard() *results.Shard {
	s := r.plan.shard
	if s == nil {
		return nil
	}
	out := &results.Shard{Index: s.Index, Count: s.Count}
	if !r.plan.startAt.IsZero() {
		at := r.plan.startAt.UTC()
		out.StartAt = &at
	}
	if r.late > 0 {
		out.LateS = roundS(r.late)
	}
	return out
}
