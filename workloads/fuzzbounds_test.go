package workloads

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// FuzzBounds looks for a workload file that makes the decoder spend without bound. An input is
// a prefix, a unit repeated reps times and a suffix, so that the fuzzer reaches the sizes where
// a parser's cost shows (a byte-level fuzzer seldom writes 32,000 "[" by itself). Whatever the
// file, Parse allocates within fuzzAllocBound, and what it accepts is within every bound it
// documents: each group's arguments marshal to at most MaxArgumentsBytes.
func FuzzBounds(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no hostile seeds: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte{}, uint32(0), []byte{})
	}
	head := []byte(hostileHead)
	f.Add(head, []byte("["), uint32(32000), []byte("\n"))
	f.Add([]byte(hostileHead+"description: |\n  'q\nx-a: "), []byte("{a: "), uint32(20000), []byte("\n"))
	f.Add([]byte(hostileHead+"x-a:\n"), []byte("  k: 1\n"), uint32(60000), []byte{})
	f.Add([]byte("x-s: &s \""+string(bytes.Repeat([]byte("s"), 9000))+"\"\n"+hostileHead+"    arguments: {a: ["), []byte("*s, "), uint32(190), []byte("1]}\n"))
	f.Fuzz(func(t *testing.T, prefix, unit []byte, reps uint32, suffix []byte) {
		size := len(prefix) + len(suffix) + len(unit)*int(min(reps, MaxFileSize+1))
		if size > MaxFileSize+1 {
			t.Skip("larger than a file Parse reads")
		}
		data := make([]byte, 0, size)
		data = append(data, prefix...)
		for range reps {
			data = append(data, unit...)
		}
		data = append(data, suffix...)

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w, err := Parse("fuzz.yaml", data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > fuzzAllocBound {
			t.Fatalf("Parse of %d bytes allocated %d MiB", len(data), alloc>>20)
		}
		if err != nil {
			checkErrors(t, err)
			return
		}
		for _, g := range w.Groups {
			if b, err := json.Marshal(g.Arguments); err != nil || len(b) > MaxArgumentsBytes {
				t.Fatalf("group %s accepted with arguments of %d bytes (%v)", g.Name, len(b), err)
			}
		}
	})
}

// fuzzAllocBound is what Parse may allocate in all for one file of at most MaxFileSize bytes:
// the corpus's worst peaks at about 140 MiB resident (TestHostileWorkloads), and the total
// allocated counts garbage too.
const fuzzAllocBound = 512 << 20
