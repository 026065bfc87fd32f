package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/results"
)

// Files is what compare does with its arguments: the export curFile against the good
// baselines among baseArgs (files, or directories of exports; with last > 0 the newest last
// good ones). Runs of different workloads are refused (a results.MismatchError) unless force,
// when the comparison says so in Forced; no good baseline at all is a MismatchError too. It
// returns the comparison, the baselines it used and the current export, for Gate.
func Files(baseArgs []string, curFile string, last int, force bool, tol gate.Tolerances) (*Comparison, []results.Part, *results.Export, error) {
	cur, err := results.ReadFile(curFile)
	if err != nil {
		return nil, nil, nil, err
	}
	cp := results.Part{File: curFile, Export: cur}
	bases, skipped, err := ReadBaselines(baseArgs, curFile, last)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(bases) == 0 {
		return nil, nil, nil, results.Mismatchf("no good baseline run among %s (a failed, interrupted or aborted run is no baseline)", strings.Join(baseArgs, ", "))
	}
	forced := ""
	for _, bp := range bases {
		if err := Comparable(bp, cp); err != nil {
			if !force {
				return nil, nil, nil, fmt.Errorf("%w; pass --force to compare them anyway", err)
			}
			forced = err.Error()
		}
	}
	c := Baseline(bases, cp, tol)
	c.Forced, c.Skipped = forced, skipped
	return c, bases, cur, nil
}

// Gate is what decides compare's verdict (docs/gate.md, "Exit status"): a current run that did
// not complete is a plain error (there is nothing to judge: exit 1); one aborted by or failing
// its own thresholds, a regression, and when strict (compare --strict) an inconclusive
// timing row are a results.GateError (exit 99); nil otherwise.
func Gate(c *Comparison, bases []results.Part, cur *results.Export, strict bool) error {
	against := bases[0].File
	if len(bases) > 1 {
		against = fmt.Sprintf("a baseline of %d runs", len(bases))
	}
	switch {
	case !results.Completed(cur):
		return errors.New(c.CurrentRun)
	case c.CurrentRun != "":
		return &results.GateError{Msg: c.CurrentRun}
	case c.Regressions > 0:
		return &results.GateError{Msg: words.Count(c.Regressions, "regression") + " against " + against}
	case strict && c.Outcome == OutcomeInconclusive:
		return &results.GateError{Msg: fmt.Sprintf("--strict: %d timing rows inconclusive against %s: %s", c.Inconclusive, against, strings.Join(c.Starved, "; "))}
	}
	return nil
}

// WriteJSON writes the comparison as indented JSON, every row (compare --json).
func WriteJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(c)
}
