package results_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/results"
	"github.com/mcpchaos/mcpchaos/results/resultstest"
)

func TestRoundTrip(t *testing.T) {
	e := resultstest.Sample(t, 1, 1)
	e.Thresholds = []results.ThresholdResult{{Expr: "probe.drops == 0", Unit: gate.UnitCount, Actual: "3"}}
	e.Timeline = &results.Timeline{IntervalS: 1, Samples: []results.Sample{{TS: 0, Groups: map[string]results.GroupSample{"naive": {States: map[string]int64{"live": 3}}}}}}
	e.Run.Shard = &results.Shard{Index: 1, Count: 2}
	back := resultstest.RoundTrip(t, e)
	a, _ := json.Marshal(e)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("export changed on the way through a file:\n%s\n%s", a, b)
	}
	h, err := back.Groups[0].Histograms["tool_call_latency"].Decoded()
	if err != nil || h.TotalCount() != 200 {
		t.Fatalf("decoded histogram: %v, %v", h, err)
	}
}

// Every export this build writes is valid against the JSON Schema it publishes, and a version
// 1 export against version 1's.
func TestSchemaDescribesExports(t *testing.T) {
	validate := func(v int, doc []byte) error {
		raw, err := results.Schema(v)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("schema v%d is not JSON Schema: %v", v, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("schema v%d: %v", v, err)
		}
		var inst any
		if err := json.Unmarshal(doc, &inst); err != nil {
			t.Fatal(err)
		}
		return rs.Validate(inst)
	}
	e := resultstest.Sample(t, 1, 1)
	e.Thresholds = []results.ThresholdResult{{Expr: "probe.drops == 0", Unit: gate.UnitCount, Actual: "3"}}
	e.Timeline = &results.Timeline{IntervalS: 1, Samples: []results.Sample{{TS: 0, Groups: map[string]results.GroupSample{"naive": {States: map[string]int64{"live": 3, results.StateBelievedLiveButDead: 1}}}}}}
	doc, _ := json.Marshal(e)
	if err := validate(2, doc); err != nil {
		t.Errorf("a v2 export does not validate against export.v2.json: %v", err)
	}
	v1 := v1Doc(t, e)
	if err := validate(1, v1); err != nil {
		t.Errorf("a v1 export does not validate against export.v1.json: %v", err)
	}
	// The schema has teeth: a wrong version, a negative counter, a bad state do not validate.
	for _, bad := range []func(m map[string]any){
		func(m map[string]any) { m["schema_version"] = 3 },
		func(m map[string]any) {
			m["groups"].([]any)[0].(map[string]any)["counters"].(map[string]any)["drops"] = -1
		},
		func(m map[string]any) {
			delete(m["overall"].(map[string]any)["histograms"].(map[string]any), "probe_latency")
		},
		func(m map[string]any) {
			m["timeline"].(map[string]any)["samples"].([]any)[0].(map[string]any)["groups"].(map[string]any)["naive"].(map[string]any)["states"].(map[string]any)["zombie"] = 1
		},
	} {
		var m map[string]any
		json.Unmarshal(doc, &m)
		bad(m)
		b, _ := json.Marshal(m)
		if validate(2, b) == nil {
			t.Errorf("a damaged export validates: %s", b[:200])
		}
	}
	// The files on disk are the ones embedded.
	for _, v := range []int{1, 2} {
		onDisk, err := os.ReadFile(filepath.Join("schema", "export.v"+string(rune('0'+v))+".json"))
		emb, _ := results.Schema(v)
		if err != nil || !bytes.Equal(onDisk, emb) {
			t.Errorf("schema v%d: %v", v, err)
		}
	}
}

// v1Doc is e as mcpchaos wrote it in schema version 1.
func v1Doc(t *testing.T, e *results.Export) []byte {
	t.Helper()
	var m map[string]any
	doc, _ := json.Marshal(e)
	json.Unmarshal(doc, &m)
	m["schema_version"] = 1
	delete(m, "thresholds")
	delete(m, "timeline")
	for _, g := range append(m["groups"].([]any), m["overall"]) {
		for _, h := range g.(map[string]any)["histograms"].(map[string]any) {
			delete(h.(map[string]any), "mean_us")
		}
	}
	out, _ := json.MarshalIndent(m, "", "  ")
	return out
}

func TestReadsVersion1(t *testing.T) {
	e := resultstest.Sample(t, 1, 1)
	back, err := results.Parse("v1.json", v1Doc(t, e))
	if err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != 1 || back.Thresholds != nil || back.Timeline != nil {
		t.Errorf("v1: %+v", back)
	}
	// The mean, new in v2, is filled in from the histogram.
	if got, want := back.Groups[0].Histograms["probe_latency"].MeanUS, e.Groups[0].Histograms["probe_latency"].MeanUS; got != want || got == 0 {
		t.Errorf("v1 mean %v, want %v", got, want)
	}
}

// A damaged or edited file gives an error naming the file, what is wrong and what to do;
// never a panic, never numbers that are not what was measured.
func TestReadRejects(t *testing.T) {
	good, _ := json.MarshalIndent(resultstest.Sample(t, 1, 1), "", "  ")
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	hist := func(m map[string]any, group int, name string) map[string]any {
		return m["groups"].([]any)[group].(map[string]any)["histograms"].(map[string]any)[name].(map[string]any)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"truncated", good[:len(good)/2], "truncated"},
		{"not json", []byte("name: x\n"), "1:3: not valid JSON"},
		{"not an export", []byte(`{"hello": 1}`), "no schema_version: not a mcpchaos export"},
		{"future", []byte(`{"schema_version": 9}`), "schema_version 9 is newer than this mcpchaos reads (1..2)"},
		{"zero", []byte(`{"schema_version": 0}`), "schema_version 0 is not a version"},
		{"wrong type", bytes.Replace(good, []byte(`"clients": 25`), []byte(`"clients": "25"`), 1), "groups.clients holds string"},
		{"edited p99", edit(func(m map[string]any) { hist(m, 0, "probe_latency")["p99_us"] = 1.0 }), "group naive: histograms.probe_latency: the summary (count 200, p50"},
		{"edited count", edit(func(m map[string]any) { hist(m, 1, "detection_delay")["count"] = 2000.0 }), "disagrees with its hdr"},
		{"damaged hdr", edit(func(m map[string]any) {
			h := hist(m, 0, "probe_latency")
			s := h["hdr"].(string)
			h["hdr"] = s[:len(s)/2]
		}), "histograms.probe_latency.hdr"},
		{"hdr not base64", edit(func(m map[string]any) { hist(m, 0, "probe_latency")["hdr"] = "HISTF!!!" }), "not valid base64"},
		{"hdr missing", edit(func(m map[string]any) { hist(m, 0, "probe_latency")["hdr"] = "" }), "not a V2 compressed HdrHistogram"},
		{"foreign geometry", edit(func(m map[string]any) {
			hist(m, 0, "probe_latency")["hdr"] = foreignHDR(t)
		}), "geometry 1..3600000000 µs at 2 digits is not mcpchaos's"},
		{"histogram missing from a group only", edit(func(m map[string]any) {
			delete(m["groups"].([]any)[0].(map[string]any)["histograms"].(map[string]any), "probe_latency")
		}), "overall.histograms.probe_latency holds 400 samples but the groups' hold 200"},
		{"overall edited", edit(func(m map[string]any) {
			m["overall"].(map[string]any)["counters"].(map[string]any)["misattributed_errors"] = 0.0
		}), "overall.counters.misattributed_errors is 0 but the groups' add up to"},
		{"duplicate group", edit(func(m map[string]any) {
			m["groups"] = append(m["groups"].([]any), m["groups"].([]any)[0])
		}), `group "naive" appears twice`},
		{"no groups", edit(func(m map[string]any) { m["groups"] = []any{} }), "no groups"},
		{"negative counter", edit(func(m map[string]any) {
			m["groups"].([]any)[0].(map[string]any)["counters"].(map[string]any)["drops"] = -1.0
		}), "counters.drops is -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.Parse("r.json", tc.data)
			var fe *results.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a FileError", err)
			}
			if !strings.HasPrefix(err.Error(), "r.json: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := results.ReadFile(filepath.Join(t.TempDir(), "nope.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func foreignHDR(t *testing.T) string {
	h := resultstest.NewForeign()
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}

func FuzzParse(f *testing.F) {
	e := resultstest.Sample(f, 1, 1)
	good, _ := json.Marshal(e)
	f.Add(good)
	f.Add(good[:100])
	f.Add([]byte(`{"schema_version":1,"run":{"workload":"w"},"groups":[{"name":"a","histograms":{"probe_latency":{"hdr":"HISTFAAAAAA="}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := results.Parse("f.json", data)
		if err == nil {
			// What reads, merges and reports without trouble.
			for _, g := range e.AllGroups() {
				for _, m := range gate.Metrics() {
					results.Value(m, g)
				}
			}
		}
	})
}

func BenchmarkReadFile(b *testing.B) {
	p := b.TempDir() + "/e.json"
	if err := results.WriteFile(p, resultstest.Sample(b, 1, 1)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := results.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}
