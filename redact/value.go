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
		nv := reflect.New(v.Type().Elem()).Elem()
		nv.Set(v.MapIndex(k))
		s.walk(nv, depth+1)
		if !nk.Equal(k) {
			v.SetMapIndex(k, reflect.Value{})
		}
		v.SetMapIndex(nk, nv)
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
