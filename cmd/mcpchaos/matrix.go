package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/matrix"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/workloads"
)

type matrixFlags struct {
	run       runFlags
	regime    string // seed or strict: the reference server's GET validation
	summary   bool
	markdown  bool
	tool      string
	arguments string
	from      string // print the matrix of this export, run nothing
}

// matrixHelp is the command's help, beside the function that builds it.
const matrixHelp = `Run the client library matrix: one group per MCP client library (the Go SDK's, mcp-go's,
the TypeScript SDK 1.x and 2.x, in node workers), the same scenario for all, against the
reference server (--regime seed: GET does not validate the session and the event log outlives
it; --regime strict: GET validates it) or a server given by --target URL with its
--session-ttl. Every client's first call (5 s) is in flight when the proxy goes down at 4 s;
the outage lasts the TTL + 3.5 s, so the sessions die behind it; then calls resume for a
minute. Against a server of your own give a call that lasts 5 s (--tool, --arguments) and a
TTL near 8.5 s: the scenario's timing is what makes each outcome the library's, not the
scheduler's (docs/libraries.md). The table says, per library,
whether the application re-initialized, got misattributed errors, hung to its timeout, was
handed a dead session's replayed answer, had its library keep polling the dead session, lost
its listener silently, or saw the death as something else.

The run is an ordinary run: its export (--out) compares with earlier ones (mcpchaos compare),
so a library upgrade shows as a change. WORKLOAD replaces the built-in scenario with a file
of your own (groups with library policies and library_options).`

func newMatrixCmd() *cobra.Command {
	var fl matrixFlags
	cmd := &cobra.Command{
		Use:   "matrix [WORKLOAD]",
		Short: "Run every client library under the same fault against one server; print library × outcome",
		Long:  matrixHelp,
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if fl.from != "" {
				if len(a) > 0 {
					return usagef("--from prints an export's matrix and runs nothing; leave out WORKLOAD")
				}
				exp, err := results.ReadFile(fl.from)
				if err != nil {
					return err
				}
				return results.WriteMatrix(cmd.OutOrStdout(), exp, fl.markdown)
			}
			w, err := fl.workload(a)
			if err != nil {
				return err
			}
			w, notMeasured, err := matrix.WithoutMissing(w)
			if err != nil {
				return &usageError{err}
			}
			if notMeasured != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "mcpchaos: %s\n", notMeasured)
			}
			plan, err := fl.run.plan(w)
			if err != nil {
				return err
			}
			if fl.run.out == "-" {
				return usagef("--out -: the matrix is printed from the export, so write it to a file")
			}
			fl.run.out = outPath(fl.run.out, w.Name)
			fl.run.quiet = !fl.summary
			stdout := cmd.OutOrStdout()
			runErr := run(cmd.Context(), plan, fl.run, stdout, cmd.ErrOrStderr())
			exp, err := results.ReadFile(fl.run.out)
			if err != nil {
				return runErr // no export: the run's own error says why
			}
			fmt.Fprintf(stdout, "\nclient libraries against %s (%s):\n\n", exp.Run.Target, exp.Run.End.Sub(exp.Run.Start).Round(time.Second))
			if err := results.WriteMatrix(stdout, exp, fl.markdown); err != nil {
				return err
			}
			if notMeasured != "" {
				fmt.Fprintf(stdout, "\n%s\n", notMeasured)
			}
			if runErr == nil && len(a) == 0 && w.Target.Builtin != nil && fl.run.target.url == "" {
				runErr = matrix.Held(exp) // a server by URL decides its sessions' deaths itself
			}
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.run.out, "out", "o", "", "where to write the JSON export (default ./mcpchaos-results/library-matrix-<time>.json)")
	f.StringVar(&fl.run.progress, "progress", "auto", "live progress: auto, bars, lines, json or off")
	f.StringVar(&fl.run.formats, "formats", "none", "companions written beside the JSON export: csv, hgrm, junit (comma-separated), or none")
	f.StringArrayVar(&fl.run.labels, "label", nil, "what the run tests, key=value, e.g. client=ts-sdk-1.32.2 (repeatable)")
	f.StringVar(&fl.regime, "regime", "seed", "the reference server's regime: seed (permissive GET, event log outliving the session) or strict (GET validates the session)")
	f.BoolVar(&fl.summary, "summary", false, "print the run's full summary table before the matrix")
	f.BoolVar(&fl.markdown, "markdown", false, "print the matrix as a Markdown table, one row per library")
	f.StringVar(&fl.tool, "tool", "", "the tool every group calls (default: the reference server's slow, or a tool of the target that reports progress)")
	f.StringVar(&fl.arguments, "arguments", "", `the tool call's arguments as a JSON object, e.g. '{"query":"q","delay_ms":500}'`)
	f.StringVar(&fl.from, "from", "", "print the matrix of this export (of an earlier matrix or run) and run nothing")
	fl.run.target.register(f)
	return cmd
}

// workload is the matrix's scenario, with the flags applied that the run's do not cover
// (matrix.Apply).
func (fl *matrixFlags) workload(a []string) (*workloads.Workload, error) {
	var w *workloads.Workload
	var err error
	if len(a) == 1 {
		w, err = workloads.Resolve(a[0])
	} else {
		w, err = matrix.Scenario()
	}
	if err != nil {
		return nil, err
	}
	if fl.regime != "seed" && fl.regime != "strict" {
		return nil, usagef("--regime %q: want seed or strict", fl.regime)
	}
	var args map[string]any
	if fl.arguments != "" {
		if err := json.Unmarshal([]byte(fl.arguments), &args); err != nil || args == nil {
			return nil, usagef("--arguments %q: want a JSON object, e.g. '{\"query\":\"q\"}'", fl.arguments)
		}
	}
	o := matrix.Options{Strict: fl.regime == "strict", URL: fl.run.target.url, Tool: fl.tool, Arguments: args, SessionTTL: fl.run.target.sessionTTL}
	if err := matrix.Apply(w, len(a) == 0, o); err != nil {
		return nil, &usageError{err}
	}
	return w, nil
}
