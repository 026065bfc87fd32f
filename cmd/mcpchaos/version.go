package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// commit is stamped at build time with -ldflags "-X main.commit=$(git rev-parse HEAD)"; when it
// is not, the commit Go recorded from the checkout (go build -buildvcs) is used, if any.
var commit = ""

// buildCommit is the commit the binary was built from, with "+dirty" for a modified checkout,
// or "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// versionLine is what `mcpchaos version` and `mcpchaos --version` print.
func versionLine() string {
	return fmt.Sprintf("mcpchaos %s (commit %s, %s, %s/%s)", version, buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the commit it was built from",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}
