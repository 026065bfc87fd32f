package shards

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/merge"
)

// The exit statuses of a shard process that still mean it exported what it ran (the
// mcpchaos command's table: docs/commands.md).
const (
	exitOK          = 0
	exitThresholds  = 99  // a threshold with abort_on_fail stopped it
	exitInterrupted = 130 // it was interrupted, drained and exported
)

// Result is what the shards of a finished run exported, merged.
type Result struct {
	// Export is the shards' exports merged (merge.Merge); nil when none wrote one.
	Export *results.Export
	Parts  []results.Part // the shards' own exports
	// Died names the shards that failed (exited other than 0, 99 or 130), Missing those that
	// wrote no export or never started, each with why.
	Died, Missing []string
	// Interrupted: the run was interrupted (the context, or a shard's exit status 130).
	Interrupted bool
}

// Problems are the sentences that say which shards are not in the merge, for the summary and
// the export's notes ("" when all are).
func (r *Result) Problems(n int) []string {
	if len(r.Missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("not in this merge, %d of %d shards: %s", len(r.Missing), n, strings.Join(r.Missing, ", "))}
}

// Err is the error a run with shards that failed or wrote nothing ends with (nil when every
// shard exported and exited 0, 99 or 130). A shard that failed but exported (its run had a
// problem, printed on stderr with its number) is in the merge; one that wrote nothing is not.
func (r *Result) Err() error {
	if len(r.Died)+len(r.Missing) == 0 {
		return nil
	}
	if len(r.Missing) == 0 {
		return fmt.Errorf("%s failed (their problems are above, each with its shard's number); the export merges all %d", strings.Join(r.Died, ", "), len(r.Parts))
	}
	return fmt.Errorf("%s failed; the export merges the %d shards that finished", strings.Join(append(r.Died, r.Missing...), ", "), len(r.Parts))
}

// Collect waits for every shard to end, reads the exports they wrote and merges them (partial
// merges allowed: a shard that died leaves the others' results). interrupted says the caller's
// run was interrupted. With no export to merge, Result.Export is nil and the error says why,
// unless the run was interrupted (nothing ran: the caller ends as a single interrupted run).
func (s *Supervisor) Collect(interrupted bool) (*Result, error) {
	s.Wait()
	r := s.collect(interrupted)
	if len(r.Parts) == 0 {
		if r.Interrupted {
			return r, nil
		}
		return r, fmt.Errorf("no shard wrote an export: %s", strings.Join(r.Missing, ", "))
	}
	merged, err := merge.Merge(r.Parts, merge.Options{AllowPartial: true})
	if err != nil {
		return r, fmt.Errorf("merging the shards: %w", err)
	}
	if r.Interrupted {
		merged.Run.Interrupted = true
	}
	merged.Run.Notes = append(merged.Run.Notes, r.Problems(s.cfg.Count)...)
	r.Export = merged
	return r, nil
}

// collect reads the exports the shards wrote.
func (s *Supervisor) collect(interrupted bool) *Result {
	r := &Result{Interrupted: interrupted}
	shards := s.started()
	for i := range s.cfg.Count {
		if i >= len(shards) {
			r.Missing = append(r.Missing, fmt.Sprintf("shard %d (never started: interrupted)", i))
			continue
		}
		p := shards[i]
		code := p.cmd.ProcessState.ExitCode()
		switch {
		case code == exitInterrupted:
			r.Interrupted = true
		case code != exitOK && code != exitThresholds:
			r.Died = append(r.Died, fmt.Sprintf("shard %d (%s)", p.index, p.cmd.ProcessState))
		}
		e, err := results.ReadFile(p.file)
		if err != nil {
			why := err.Error()
			if errors.Is(err, os.ErrNotExist) {
				why = "it wrote none: " + p.cmd.ProcessState.String()
			}
			r.Missing = append(r.Missing, fmt.Sprintf("shard %d (%s)", p.index, why))
			continue
		}
		r.Parts = append(r.Parts, results.Part{File: p.file, Export: e})
	}
	return r
}
