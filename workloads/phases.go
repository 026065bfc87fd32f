package workloads

import (
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

var phaseSchema = schema{keys: []schemaKey{
	{"name", "name the phase with lowercase letters, digits, - and _, e.g. name: wait-ttl"},
	{"duration", "set how long the phase lasts, e.g. 10m, or ttl+1.5s to wait for the session TTL to run out"},
	{"calls", "set calls: true to make tool calls during this phase, or calls: false to only hold the sessions"},
}}

// phases decodes the phase list and lays the phases end to end. The run
// length is known only if every phase duration could be resolved.
func (d *decoder) phases(f *field, ttl time.Duration, ttlOK bool) ([]Phase, []*time.Duration, runLength) {
	entries, ok := d.list(f, maxListLen)
	if !ok {
		return nil, nil, runLength{}
	}
	if len(entries) == 0 {
		d.errorf(f.node, f.path, "is empty; %s", f.hint)
		return nil, nil, runLength{}
	}
	var (
		phases  = make([]Phase, 0, len(entries))
		offsets = make([]*time.Duration, len(entries))
		run     = runLength{known: true}
		names   = map[string]ast.Node{}
	)
	for i, e := range entries {
		path := fmt.Sprintf("%s[%d]", f.path, i)
		m := d.mapping(e, path, &phaseSchema)
		p := Phase{Name: fmt.Sprintf("phase-%d", i), Start: run.d}
		if nf := m.field("name"); nf != nil {
			if name, ok := d.name(nf); ok {
				p.Name = name
				if prev, dup := names[name]; dup {
					line, col := position(prev)
					d.errorf(nf.node, nf.path, "duplicate phase name %q (first at %d:%d); give each phase its own name", name, line, col)
				} else {
					names[name] = nf.node
				}
			}
		}
		resolved := false
		if df := m.require("duration"); df != nil {
			p.Duration, offsets[i], resolved = d.phaseDuration(df, ttl, ttlOK)
		}
		if cf := m.require("calls"); cf != nil {
			p.Calls, _ = d.boolean(cf)
		}
		if !resolved || !m.ok {
			run.known = false
		}
		run.d += p.Duration
		if run.known && run.d > maxDuration {
			d.errorf(e, path, "the phases up to here last %s, longer than %s; shorten them", fmtDur(run.d), fmtDur(maxDuration))
			run.known = false
		}
		phases = append(phases, p)
	}
	if !run.known {
		run.d = 0
	}
	return phases, offsets, run
}

// phaseDuration reads a phase duration: a plain duration, or "ttl",
// "ttl+DUR" or "ttl-DUR" for the target's session_ttl plus or minus DUR. The
// result must be positive.
// offset is set for a ttl expression, so that the phase can be re-timed to another TTL.
func (d *decoder) phaseDuration(f *field, ttl time.Duration, ttlOK bool) (_ time.Duration, offset *time.Duration, _ bool) {
	s, isString := f.node.(*ast.StringNode)
	if !isString || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s.Value)), "ttl") {
		v, ok := d.duration(f)
		if ok && !d.checkDuration(f, v, 0, true) {
			return 0, nil, false
		}
		return v, nil, ok
	}
	expr := strings.TrimSpace(s.Value)
	if !strings.HasPrefix(expr, "ttl") {
		d.errorf(f.node, f.path, "%q: write ttl in lowercase, e.g. ttl+1.5s", s.Value)
		return 0, nil, false
	}
	rest := strings.TrimSpace(expr[len("ttl"):])
	var off time.Duration
	if rest != "" {
		sign := rest[0]
		dur, msg := parseDuration(strings.TrimSpace(rest[1:]))
		switch {
		case sign != '+' && sign != '-':
			d.errorf(f.node, f.path, "%q is not a ttl expression; write ttl, ttl+DURATION or ttl-DURATION, e.g. ttl+1.5s", s.Value)
			return 0, nil, false
		case msg != "":
			d.errorf(f.node, f.path, "in %q: %s", s.Value, msg)
			return 0, nil, false
		case dur < 0:
			d.errorf(f.node, f.path, "in %q: write one sign, e.g. ttl-1s", s.Value)
			return 0, nil, false
		}
		off = dur
		if sign == '-' {
			off = -dur
		}
	}
	if !ttlOK {
		// The TTL is missing or wrong, and reported there; or a URL target declares none.
		if d.noTTL != "" {
			d.errorf(f.node, f.path, "%q waits for the session TTL, but %s", s.Value, d.noTTL)
		}
		return 0, nil, false
	}
	v := ttl + off
	if v <= 0 {
		d.errorf(f.node, f.path, "%q comes to %s with session_ttl %s; a phase must last more than 0s: shorten the offset",
			s.Value, fmtDur(v), fmtDur(ttl))
		return 0, nil, false
	}
	return v, &off, true
}
