package remotewrite_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// promSample is one series of an instant query's answer.
type promSample struct {
	Metric map[string]string
	Value  float64
}

// query runs an instant PromQL query and returns its vector (a scalar as one sample).
func query(t testing.TB, base, q string) []promSample {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, body.Status, body.Error)
	}
	var out []promSample
	parse := func(v []any) float64 {
		f, _ := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
		return f
	}
	switch body.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string
			Value  []any
		}
		if err := json.Unmarshal(body.Data.Result, &vec); err != nil {
			t.Fatal(err)
		}
		for _, s := range vec {
			out = append(out, promSample{s.Metric, parse(s.Value)})
		}
	case "scalar":
		var v []any
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, promSample{nil, parse(v)})
	default:
		t.Fatalf("query %s: a %s, not an instant vector", q, body.Data.ResultType)
	}
	return out
}
