package workloads

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// steadyState is Validate's part for the steady_state section (steady.go decodes it).
func (v *validator) steadyState(w *Workload) {
	ss := w.SteadyState
	if ss == nil {
		return
	}
	if len(ss.Probes) == 0 || len(ss.Probes) > maxProbes {
		v.add("steady_state.probes", "has %d probes; give 1 to %d", len(ss.Probes), maxProbes)
	}
	faults := map[string]bool{}
	for _, f := range w.Faults {
		faults[f.Name] = true
	}
	names := map[string]bool{}
	for i, p := range ss.Probes {
		f := fmt.Sprintf("steady_state.probes[%d]", i)
		if !validName(p.Name) || len(p.Name) > maxNameLen {
			v.add(f+".name", "%q must be 1 to %d lowercase letters, digits, - and _", p.Name, maxNameLen)
		} else if names[p.Name] {
			v.add(f+".name", "duplicate probe name %q", p.Name)
		}
		names[p.Name] = true
		v.probe(f, w, p, faults)
	}
}

func (v *validator) probe(f string, w *Workload, p SteadyProbe, faults map[string]bool) {
	if len(p.When) == 0 {
		v.add(f+".when", "is empty; say before, after, continuously or during")
	}
	for j, when := range p.When {
		v.oneOf(fmt.Sprintf("%s.when[%d]", f, j), when, steadyWhens)
	}
	if p.Runs(SteadyContinuously) || p.Runs(SteadyDuring) {
		v.duration(f+".every", p.Every, true)
		v.loop(f+".every", p.Every, minProbeEvery, false)
	}
	if p.Runs(SteadyDuring) != (p.During != "") {
		v.add(f+".during", "goes with when: during, and when: during needs it")
	} else if p.During != "" && !faults[p.During] {
		v.add(f+".during", "names fault %q, which this workload does not have", p.During)
	}
	v.duration(f+".timeout", p.Timeout, true)
	v.intIn(f+".retries", p.Retries, 0, maxProbeRetries)
	v.duration(f+".retry_interval", p.RetryInterval, true)
	v.loop(f+".retry_interval", p.RetryInterval, minRetryInterval, false)
	if p.Timeout > maxProbeTimeout {
		v.add(f+".timeout", "%s is longer than %s", fmtDur(p.Timeout), fmtDur(maxProbeTimeout))
	}
	n := 0
	for _, set := range []bool{p.HTTP != nil, p.Command != nil, p.PromQL != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.add(f, "sets %d of http, command, promql; set exactly one", n)
		return
	}
	var tol *vocab.Tolerance
	if p.Tolerance != "" {
		t, err := vocab.ParseTolerance(p.Tolerance)
		if err != nil {
			v.add(f+".tolerance", "%v", err)
		}
		tol = &t
	}
	switch {
	case p.HTTP != nil:
		if msg := CheckProbeURL(p.HTTP.URL, w.Target); msg != "" {
			v.add(f+".http.url", "%s", msg)
		}
		v.status(f+".http.status", p.HTTP.Status)
		if (p.HTTP.JSONField != "") != (tol != nil) {
			v.add(f+".tolerance", "an http probe has a tolerance exactly when it names a json_field")
		}
	case p.Command != nil:
		if strings.TrimSpace(p.Command.Command) == "" {
			v.add(f+".command.command", "is empty")
		}
		v.intIn(f+".command.exit_status", p.Command.ExitStatus, 0, 255)
		v.intIn(f+".command.max_output", p.Command.MaxOutput, 1, maxMaxOutput)
	case p.PromQL != nil:
		if msg := CheckProbeURL(p.PromQL.URL, w.Target); msg != "" {
			v.add(f+".promql.url", "%s", msg)
		}
		if strings.TrimSpace(p.PromQL.Query) == "" {
			v.add(f+".promql.query", "is empty")
		}
		if tol == nil {
			v.add(f+".tolerance", "is missing: a promql probe's value is judged by a tolerance")
		}
	}
	if tol != nil && tol.NeedsBefore() && !p.Runs(SteadyBefore) {
		v.add(f+".tolerance", "compares with the before value, and the probe does not run before")
	}
}

// CheckProbeURL says what is wrong with a probe's URL ("" when nothing): it must be an http(s)
// URL, on loopback or the target's host ({{target}} is the target itself).
func CheckProbeURL(raw string, t Target) string {
	u := raw
	if rest, ok := strings.CutPrefix(raw, TargetPlaceholder); ok {
		if rest != "" && !strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "?") {
			return fmt.Sprintf("%q: {{target}} is scheme://host:port; follow it with a path, e.g. {{target}}/healthz", raw)
		}
		u = "http://127.0.0.1:1" + rest
	} else if strings.Contains(raw, TargetPlaceholder) {
		return fmt.Sprintf("%q: {{target}} may only start the URL, e.g. {{target}}/healthz", raw)
	}
	if msg := CheckURL(u); msg != "" {
		return msg
	}
	return vocab.AllowedHost(u, targetHost(t))
}

// targetHost is the host of a URL target, "" for the built-in server.
func targetHost(t Target) string {
	if t.Builtin != nil || t.URL == "" {
		return ""
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
