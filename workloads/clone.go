package workloads

import (
	"reflect"
	"slices"
	"time"
)

// Clone is a deep copy of w: it shares nothing with w that either could change (groups,
// phases, faults, tool arguments, headers, thresholds, probes, ...), so a plan made from w
// keeps what was checked however w changes afterwards. Clone of nil is nil.
func (w *Workload) Clone() *Workload {
	if w == nil {
		return nil
	}
	c := deepCopy(reflect.ValueOf(w).Elem()).Interface().(Workload)
	// deepCopy sees only exported fields; the unexported ones that hold references are copied
	// here (TestCloneSeesEveryReference names any other).
	if w.ttlOffsets != nil {
		c.ttlOffsets = make([]*time.Duration, len(w.ttlOffsets))
		for i, off := range w.ttlOffsets {
			if off != nil {
				d := *off
				c.ttlOffsets[i] = &d
			}
		}
	}
	c.clientsWhere = slices.Clone(w.clientsWhere)
	return &c
}

// deepCopy copies v and everything it points to. Unexported struct fields are copied as
// values (TestCloneSharesNothing checks that none of the workload's types has one that holds
// a reference). A workload has no cycles, channels or functions.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(deepCopy(v.Index(i)))
		}
		return s
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return m
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		i := reflect.New(v.Type()).Elem()
		i.Set(deepCopy(v.Elem()))
		return i
	case reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		s.Set(v)
		for i := range v.NumField() {
			if f := s.Field(i); f.CanSet() {
				f.Set(deepCopy(v.Field(i)))
			}
		}
		return s
	case reflect.Array:
		a := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			a.Index(i).Set(deepCopy(v.Index(i)))
		}
		return a
	}
	return v
}
