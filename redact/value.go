package redact

import (
	"reflect"
)

// Value redacts, in place, every string reachable from ptr (a pointer): struct fields,
// elements of slices and arrays, map keys and values, through pointers and interfaces. An
// export or a fingerprint goes through here once, on its way out: a field added later is
// covered without anyone remembering to.
func (s *Set) Value(ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	s.walk(v.Elem(), 0)
}

// maxDepth bounds the walk: values written out are trees, far shallower than this.
const maxDepth = 64

func (s *Set) walk(v reflect.Value, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(s.String(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			s.walk(v.Elem(), depth+1)
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		if v.Type() == errorType { // an error field: its chain's fields, then its text
			e := v.Interface().(error)
			s.chain(e, depth+1)
			if r := s.Error(e); r != e {
				v.Set(reflect.ValueOf(r))
			}
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		s.walk(c, depth+1)
		v.Set(c)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				s.walk(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.CanSet() && !v.IsNil() {
				v.SetBytes(s.Bytes(v.Bytes()))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			s.walk(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			s.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		s.walkMap(v, depth)
	}
}

func (s *Set) walkMap(v reflect.Value, depth int) {
	if v.IsNil() {
		return
	}
	keys := v.MapKeys()
	for _, k := range keys {
		nk := reflect.New(k.Type()).Elem()
		nk.Set(k)
		s.walk(nk, depth+1)
		old := v.MapIndex(k)
		nv := reflect.New(v.Type().Elem()).Elem()
		nv.Set(old)
		s.walk(nv, depth+1)
		if nk.Equal(k) && nv.Comparable() && old.Comparable() && nv.Equal(old) {
			continue // unchanged: no write, so a map others read (the run's labels, which
			// /metrics serves until one scrape) is never written under them
		}
		if !nk.Equal(k) {
			v.SetMapIndex(k, reflect.Value{})
		}
		v.SetMapIndex(nk, nv)
	}
}

var errorType = reflect.TypeFor[error]()

// Out is the one exit through which what mcpchaos learnt leaves for an output (engine.Run's
// export and error, inspect.Inspect's fingerprint and error, wire's request errors): each
// value (a pointer) is redacted in place, every error in err's chain has its exported fields
// redacted in place (the fields of a typed error that a caller prints: a cause, a list of
// problems, a reason; an error field also gets its text redacted), and err is returned with
// its text redacted. A type added later, or a field, is covered without anyone remembering to.
func (s *Set) Out(err error, values ...any) error {
	for _, v := range values {
		s.Value(v)
	}
	s.chain(err, 0)
	return s.Error(err)
}

// chain redacts the exported fields of each error in err's chain (Unwrap, single or many),
// bounded by maxDepth.
func (s *Set) chain(err error, depth int) {
	if err == nil || depth > maxDepth {
		return
	}
	if v := reflect.ValueOf(err); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		s.walk(v.Elem(), depth+1)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		s.chain(u.Unwrap(), depth+1)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			s.chain(e, depth+1)
		}
	}
}

// Error returns err with its text redacted (String); errors.As and errors.Is still reach the
// errors it wraps. Text an error's fields hold beside its message (a caller printing them)
// must go through Value.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	if text := err.Error(); s.String(text) != text {
		return &redactedError{err: err, text: s.String(text)}
	}
	return err
}

type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
