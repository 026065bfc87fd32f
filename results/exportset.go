package results

import (
	"context"
	"fmt"

	"github.com/mcpchaos/mcpchaos/outfile"
)

// CompanionFormats are the companions an export at out gets: none when it goes to standard
// output, a device or a FIFO, which give companions no name to be named after (/dev/null.csv).
func CompanionFormats(out string, formats []string) []string {
	if outfile.IsDirect(out) {
		return nil
	}
	return formats
}

// WriteExportSet writes the export and its companions, removes the companions an earlier run
// left under this name in formats not asked for now, and returns the companion paths written.
// Until it returns without error, the set's marker (outfile.Marker) says it is incomplete.
// An export to a device or a FIFO ends on a signal while it is written (ctx, if still live:
// a run that a signal stopped still writes its partial export, bounded by outfile.Stall).
func WriteExportSet(ctx context.Context, out string, e *Export, formats []string) ([]string, error) {
	if ctx.Err() != nil {
		ctx = context.Background()
	}
	formats = CompanionFormats(out, formats)
	set := CompanionSet(out, formats)
	if err := set.Begin(); err != nil {
		return nil, fmt.Errorf("writing the export: %w", err)
	}
	if err := WriteFileContext(ctx, out, e); err != nil {
		return nil, fmt.Errorf("writing the export: %w", err)
	}
	written, err := WriteCompanions(out, e, formats)
	if err != nil {
		return written, err
	}
	if err := set.Done(); err != nil {
		return written, fmt.Errorf("completing the export's set: %w", err)
	}
	return written, nil
}
