package main

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/engine"
	"github.com/mcpchaos/mcpchaos/workloads"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// targetFlags are the run's command-line overrides of the workload's target and injector.
type targetFlags struct {
	url        string
	sessionTTL string // a duration, or "none"
	headers    []string
	caFile     string
	insecure   bool
	http2      bool
	toxiproxy  string
	ttlMode    string
	// inspectedTTLMode is the ttl_mode inspect found (--from-inspect): a URL target takes it
	// unless --ttl-mode or the workload says how its TTL counts.
	inspectedTTLMode string
	set              func(name string) bool
}

func (tf *targetFlags) register(f *pflag.FlagSet) {
	f.StringVar(&tf.url, "target", "", "run against the MCP server at this URL instead of the workload's target (http:// or https://)")
	f.StringVar(&tf.sessionTTL, "session-ttl", "", "the target's session TTL, declared: phases that wait for ttl use it, and detection delays are estimated from it; none: its sessions never expire")
	f.StringVar(&tf.ttlMode, "ttl-mode", "", "how the target's session TTL counts: sliding (from the last request, the default) or absolute (from initialize, however active: `mcpchaos inspect --ttl` tells which)")
	f.StringArrayVar(&tf.headers, "header", nil, `extra request header "Name: value" for a URL target, repeatable; ${VAR} is taken from the environment`)
	f.StringVar(&tf.caFile, "ca-file", "", "PEM certificates to trust for an https target")
	f.BoolVar(&tf.insecure, "insecure-skip-verify", false, "accept any certificate from an https target (never in production)")
	f.BoolVar(&tf.http2, "http2", false, "speak HTTP/2 to a URL target (h2 over TLS, h2c over plain http) instead of HTTP/1.1")
	f.StringVar(&tf.toxiproxy, "toxiproxy", "", "create the proxies on the toxiproxy-server with this API URL (e.g. http://127.0.0.1:8474) instead of embedded Toxiproxy")
	tf.set = func(name string) bool { return f.Changed(name) }
}

// options are the flags' overrides of w's target and injector, as plan options: engine.NewPlan
// applies and checks them once, and its errors name the field, which flagError turns back into
// the flag.
func (tf *targetFlags) options(w *workloads.Workload) ([]engine.PlanOption, error) {
	if tf.set == nil {
		return nil, nil
	}
	var opts []engine.PlanOption
	if tf.set("toxiproxy") {
		opts = append(opts, engine.WithToxiproxy(tf.toxiproxy)) // checked by engine.NewPlan
	}
	changed := false
	for _, n := range []string{"target", "session-ttl", "ttl-mode", "header", "ca-file", "insecure-skip-verify", "http2"} {
		changed = changed || tf.set(n)
	}
	// inspect's finding applies to a URL target whose workload does not say how its TTL counts.
	inspected := tf.inspectedTTLMode != "" && !tf.set("ttl-mode") && (tf.set("target") || (w.Target.URL != "" && w.Target.TTLMode == ""))
	changed = changed || inspected
	if !changed {
		return opts, nil
	}
	t := w.Target
	if tf.set("target") {
		if t.Builtin != nil {
			// The reference server's regime means nothing to a real server; its TTL stays the
			// declared one unless --session-ttl says otherwise.
			t = workloads.Target{SessionTTL: t.SessionTTL}
		}
		t.URL, t.Where = tf.url, "--target"
	}
	if t.URL == "" {
		return nil, usagef("--session-ttl, --ttl-mode, --header, --ca-file, --insecure-skip-verify and --http2 apply to a target given by URL; add --target URL")
	}
	if inspected {
		t.TTLMode = tf.inspectedTTLMode
	}
	if tf.set("ttl-mode") {
		if !slices.Contains(vocab.TTLModes(), tf.ttlMode) {
			return nil, usagef("--ttl-mode %q: want %s", tf.ttlMode, strings.Join(vocab.TTLModes(), " or "))
		}
		t.TTLMode = tf.ttlMode
	}
	if tf.set("session-ttl") {
		if tf.sessionTTL == "none" {
			t.SessionTTL, t.NoSessionTTL = 0, true
		} else {
			d, err := time.ParseDuration(tf.sessionTTL)
			if err != nil || d <= 0 {
				return nil, usagef("--session-ttl %q: want a duration greater than 0, e.g. 30m, or none for a server whose sessions never expire", tf.sessionTTL)
			}
			t.SessionTTL, t.NoSessionTTL = d, false
		}
	}
	for _, h := range tf.headers {
		hd, err := workloads.ParseHeader(h)
		if err != nil {
			return nil, usagef("--header: %v", err)
		}
		t.Headers = append(t.Headers, hd)
	}
	if tf.set("ca-file") {
		t.CAFile = tf.caFile
	}
	if tf.set("insecure-skip-verify") {
		t.InsecureSkipVerify = tf.insecure
	}
	if tf.set("http2") {
		t.HTTP2 = tf.http2
	}
	if t.Where == "" {
		t.Where = "--target"
	}
	return append(opts, engine.WithTarget(t)), nil
}

// flagOf maps the fields the run's flags set to the flags, for errors of engine.NewPlan.
var flagOf = []struct{ field, flag string }{
	{"toxiproxy", "--toxiproxy"},
	{"target.url", "--target"},
	{"target.session_ttl", "--session-ttl"},
	{"target.ttl_mode", "--ttl-mode"},
	{"target.headers", "--header"},
	{"target.insecure_skip_verify", "--insecure-skip-verify"},
	{"target", "--target"},
	{"thresholds (added)", "--threshold"},
	{"shard", "--shard"},
	{"labels", "--label"},
}

// flagError is engine.NewPlan's error as a usage error; a mistake in a field a flag sets is
// said of the flag (a field the workload file sets was checked, with its line, when the file
// was read). more, if given, names the flags of fields flagOf does not know.
func flagError(err error, more ...func(field string) string) error {
	var ce *engine.ConfigError
	if !errors.As(err, &ce) {
		return &usageError{err}
	}
	flag := func(field string) string {
		for _, m := range more {
			if f := m(field); f != "" {
				return f
			}
		}
		return flagFor(field)
	}
	var ve *workloads.ValidationError
	if !errors.As(err, &ve) {
		if f := flag(ce.Field); f != "" && ce.Field != "target" {
			return usagef("%s: %v", f, ce.Err)
		}
		return &usageError{err}
	}
	lines := make([]string, len(ve.Errs))
	for i, e := range ve.Errs {
		lines[i] = e.Error()
		if f := flag(e.Field); f != "" {
			lines[i] = f + ": " + e.Msg
		}
	}
	return usagef("%s", strings.Join(lines, "\n"))
}

func flagFor(field string) string {
	for _, m := range flagOf {
		if field == m.field || strings.HasPrefix(field, m.field+"[") || strings.HasPrefix(field, m.field+".") {
			return m.flag
		}
	}
	return ""
}
