package steady

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// Command runs a program whose exit status (and, if asked, output) says whether the system is
// steady: a script of the team's, `kubectl get`, `redis-cli info`. It runs as an exec action
// does (faults.Exec): in its own process group, killed with it at the probe's timeout, its
// output bounded to MaxOutput bytes and redacted.
type Command struct {
	Command string
	Args    []string
	Env     []string // NAME=value, added to mcpchaos's environment
	// ExitStatus is the status expected (0 by default).
	ExitStatus int
	// OutputContains, when set, must appear in the output kept.
	OutputContains string
	// Number makes the output (trimmed) the observed value, for the probe's tolerance;
	// otherwise the value is the exit status.
	Number bool
	// MaxOutput bounds the output kept; 0 means faults.DefaultMaxOutput.
	MaxOutput int
	Redact    func([]byte) []byte
	// Groups records the command's process group, for the run to end what it left running
	// (faults.Groups); nil records nothing.
	Groups *faults.Groups
}

func (c Command) Kind() string { return "command" }

func (c Command) Observe(ctx context.Context) Observation {
	timeout := time.Hour // the probe's context bounds it; Exec needs a bound of its own
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	out := faults.Exec{Command: c.Command, Args: c.Args, Env: c.Env, Timeout: timeout, MaxOutput: c.MaxOutput, Redact: c.Redact, Groups: c.Groups}.Do(ctx, faults.Env{})
	if out.ExitStatus == nil {
		return Observation{Err: out.Err}
	}
	code := *out.ExitStatus
	obs := Observation{Value: f64(float64(code)), Detail: "exit " + strconv.Itoa(code)}
	if out.Truncated {
		obs.Detail += " (output truncated)"
	}
	switch {
	case code != c.ExitStatus:
		obs.Fail = fmt.Sprintf("exit status %d, want %d", code, c.ExitStatus)
		if o := clip(out.Output, 200); o != "" {
			obs.Fail += ": " + o
		}
	case c.OutputContains != "" && !strings.Contains(out.Output, c.OutputContains):
		obs.Fail = fmt.Sprintf("the output (%d bytes) does not contain %q", len(out.Output), c.OutputContains)
	case c.Number:
		v, err := number(strings.TrimSpace(out.Output))
		if err != nil {
			obs.Err = fmt.Errorf("the output %q is not a number", clip(out.Output, 40))
			return obs
		}
		obs.Value, obs.Detail = f64(v), obs.Detail+", output "+format(v)
	}
	return obs
}
