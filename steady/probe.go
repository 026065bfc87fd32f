package steady

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// Check observes the system once. Observe returns when it has its observation or ctx ends;
// it never reads more than MaxBody bytes of anything.
type Check interface {
	Kind() string // "http", "command", "promql"
	Observe(ctx context.Context) Observation
}

// Observation is what one run of a check saw.
type Observation struct {
	Value  *float64 // the value a tolerance judges; nil when none was observed
	Detail string   // in words, short: "status 200", "exit 0", "sessions_held = 3"
	// Fail is the check's own verdict against what it expected (status 503, want 200; exit 1,
	// want 0; body lacks "ok"); "" when it got what it expected.
	Fail string
	Err  error // nothing could be observed: refused, timed out, no data
}

// MaxBody bounds what a check reads of a response body or a query answer.
const MaxBody = 1 << 20

// Probe is a check and its tolerance.
type Probe struct {
	Name      string
	Check     Check
	Tolerance *vocab.Tolerance // nil: the check's own expectation decides
	Timeout   time.Duration    // one run's bound; 0 means vocab.DefaultProbeTimeout
}

// Result is one run of a probe, judged.
type Result struct {
	Value  *float64
	Detail string
	Pass   bool
	Why    string // when it did not pass: the error, the expectation missed, or the tolerance
	Took   time.Duration
}

// Run runs the probe once, within its timeout, and judges what it saw; before is the probe's
// value in its before run (nil when it has none), for a "within ... of before" tolerance.
func (p Probe) Run(ctx context.Context, before *float64) Result {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = vocab.DefaultProbeTimeout
	}
	began := time.Now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	obs := p.Check.Observe(cctx)
	cancel()
	r := Result{Value: obs.Value, Detail: obs.Detail, Took: time.Since(began)}
	switch {
	case obs.Err != nil && ctx.Err() != nil:
		r.Why = "stopped with the run: " + obs.Err.Error()
	case obs.Err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		r.Why = fmt.Sprintf("no answer within %s: %v", timeout, obs.Err)
	case obs.Err != nil:
		r.Why = obs.Err.Error()
	case obs.Fail != "":
		r.Why = obs.Fail
	case p.Tolerance != nil && obs.Value == nil:
		r.Why = "observed no value to judge"
	case p.Tolerance != nil:
		ok, why := p.Tolerance.Judge(*obs.Value, before)
		r.Pass, r.Why = ok, why
		if !ok {
			r.Why = "outside the tolerance " + p.Tolerance.Expr + ": " + why
		}
	default:
		r.Pass = true
	}
	return r
}

func f64(v float64) *float64 { return &v }

// number reads an observed value: a finite number.
func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a finite number")
	}
	return v, nil
}

// format writes an observed value as a tolerance's judgement does.
func format(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// clip keeps s short for a detail line.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// get makes the GET of an http or promql check with c (nil: one that follows no redirect) and
// reads at most limit bytes of the body, which it closes.
func get(ctx context.Context, c *http.Client, u string, limit int64) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		c = noRedirects
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, unwrapURL(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the body: %w", err)
	}
	return resp, body, nil
}
