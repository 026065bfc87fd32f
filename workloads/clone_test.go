package workloads

import (
	"reflect"
	"testing"
	"time"
)

// fill sets every exported field reachable from v to something that is not zero: pointers
// allocated, one element in every slice and map, and in an `any` a map holding a list holding
// a map (as YAML decodes tool arguments), so that a clone sharing any of them shows.
func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		v.SetMapIndex(k, e)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"list": []any{map[string]any{"n": 1}}}))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// references lists the addresses of everything v holds by reference (pointers, slices' arrays,
// maps), unexported fields included.
func references(v reflect.Value, out map[uintptr]string, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out[v.Pointer()] = path
			references(v.Elem(), out, path+".*")
		}
	case reflect.Slice:
		if v.Len() > 0 {
			out[v.Pointer()] = path
		}
		for i := range v.Len() {
			references(v.Index(i), out, path+"[]")
		}
	case reflect.Map:
		if !v.IsNil() {
			out[v.Pointer()] = path
		}
		for it := v.MapRange(); it.Next(); {
			references(it.Value(), out, path+"{}")
		}
	case reflect.Interface:
		if !v.IsNil() {
			references(v.Elem(), out, path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			references(v.Field(i), out, path+"."+v.Type().Field(i).Name)
		}
	}
}

func TestCloneSharesNothing(t *testing.T) {
	var w Workload
	fill(reflect.ValueOf(&w).Elem(), 0)
	d := time.Second
	w.ttlOffsets = []*time.Duration{&d, nil}
	w.decodedAs = "sha256:x"
	w.clientsWhere = []string{"w.yaml:9:3"}
	c := w.Clone()
	if !reflect.DeepEqual(&w, c) {
		t.Fatalf("the clone differs from the workload:\n%+v\n%+v", w, *c)
	}
	orig, cloned := map[uintptr]string{}, map[uintptr]string{}
	references(reflect.ValueOf(&w).Elem(), orig, "w")
	references(reflect.ValueOf(c).Elem(), cloned, "w")
	if len(orig) < 20 {
		t.Fatalf("fill reached %d references; it should reach every field of a workload", len(orig))
	}
	for addr, path := range cloned {
		if o, ok := orig[addr]; ok {
			t.Errorf("the clone's %s is the workload's %s: changing one changes the other", path, o)
		}
	}
	if (*Workload)(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
}

// Clone copies unexported fields as values; this holds it to the workload's types having none
// that holds a reference, but for the ones Clone copies itself.
func TestCloneSeesEveryReference(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Map:
			walk(ty.Key(), path+"{key}")
			walk(ty.Elem(), path+"{}")
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				switch k := f.Type.Kind(); {
				case f.IsExported():
					walk(f.Type, path+"."+f.Name)
				case ty == reflect.TypeFor[Workload]() && (f.Name == "ttlOffsets" || f.Name == "clientsWhere"):
				case k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface ||
					k == reflect.Chan || k == reflect.Func:
					t.Errorf("%s.%s (%s) is unexported and holds a reference: Workload.Clone would share it; copy it in Clone", path, f.Name, f.Type)
				default:
					walk(f.Type, path+"."+f.Name)
				}
			}
		case reflect.Chan, reflect.Func:
			t.Errorf("%s is a %s: a workload cannot be copied with one", path, ty.Kind())
		}
	}
	walk(reflect.TypeFor[Workload](), "Workload")
}

// What a caller sees: a loaded workload, cloned, then changed where a caller would change it.
func TestCloneOfABuiltin(t *testing.T) {
	w, err := Load("examples/steady-state.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w.Groups[0].Arguments = map[string]any{"text": "hello", "nested": []any{"a"}}
	c := w.Clone()
	w.Groups[0].Clients = -3
	w.Groups[0].Arguments["text"] = "changed"
	w.Groups[0].Arguments["nested"].([]any)[0] = "changed"
	w.Faults[0].Attributes["timeout"] = 0
	w.SteadyState.Probes[0].HTTP.URL = "http://example.com"
	w.Rollbacks[0].Action.Args[0] = "rm"
	if err := c.Validate(); err != nil {
		t.Fatalf("the clone changed with the workload: %v", err)
	}
	if c.Groups[0].Clients != 3 || c.Groups[0].Arguments["text"] != "hello" || c.Groups[0].Arguments["nested"].([]any)[0] != "a" ||
		c.SteadyState.Probes[0].HTTP.URL == "http://example.com" || c.Rollbacks[0].Action.Args[0] == "rm" {
		t.Fatalf("the clone changed with the workload: %+v", c.Groups[0])
	}
}
