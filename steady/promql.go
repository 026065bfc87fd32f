package steady

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// PromQL is an instant query against a Prometheus server (its HTTP API, /api/v1/query) whose
// one sample is the observed value: the server's RSS, its sessions held, its rate of 5xx. A
// query that returns no series, or more than one, observes nothing: aggregate it to one
// (sum, max).
type PromQL struct {
	URL   string // the server's base URL, e.g. http://127.0.0.1:9090
	Query string
	// Client makes the request; nil: one that follows no redirect.
	Client *http.Client
}

func (p PromQL) Kind() string { return "promql" }

func (p PromQL) Observe(ctx context.Context) Observation {
	u := strings.TrimSuffix(p.URL, "/") + "/api/v1/query?query=" + url.QueryEscape(p.Query)
	resp, body, err := get(ctx, p.Client, u, MaxBody+1)
	if err != nil {
		return Observation{Err: err}
	}
	if len(body) > MaxBody {
		return Observation{Err: fmt.Errorf("the answer is larger than %d bytes; aggregate the query to one series", MaxBody)}
	}
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Observation{Err: fmt.Errorf("status %d and not a Prometheus API answer (%s)", resp.StatusCode, clip(string(body), 80))}
	}
	if r.Status != "success" {
		return Observation{Err: fmt.Errorf("the query failed (%s): %s", r.ErrorType, clip(r.Error, 200))}
	}
	v, err := oneSample(r.Data.ResultType, r.Data.Result)
	if err != nil {
		return Observation{Err: err}
	}
	return Observation{Value: f64(v), Detail: "value " + format(v)}
}

// oneSample is the value of a scalar, or of a vector of exactly one series.
func oneSample(kind string, raw json.RawMessage) (float64, error) {
	var pair [2]any
	switch kind {
	case "scalar":
		if err := json.Unmarshal(raw, &pair); err != nil {
			return 0, fmt.Errorf("a malformed scalar: %v", err)
		}
	case "vector":
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(raw, &vec); err != nil {
			return 0, fmt.Errorf("a malformed vector: %v", err)
		}
		switch len(vec) {
		case 0:
			return 0, fmt.Errorf("the query returned no data (no series matched)")
		case 1:
			pair = vec[0].Value
		default:
			return 0, fmt.Errorf("the query returned %d series; aggregate them to one, e.g. sum(...) or max(...)", len(vec))
		}
	default:
		return 0, fmt.Errorf("the query returned a %s; write an instant query that returns one number", kind)
	}
	s, ok := pair[1].(string)
	if !ok {
		return 0, fmt.Errorf("a sample value that is not a string")
	}
	switch s {
	case "NaN", "+Inf", "-Inf":
		return 0, fmt.Errorf("the query returned %s", s)
	}
	return number(s)
}
