package steady

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// HTTP is a GET whose status (and, if asked, body) says whether the system is steady: the
// server's /healthz, its /metrics, a JSON status page. Redirects are not followed (they could
// lead anywhere); a redirect is a status like any other.
type HTTP struct {
	URL    string
	Status int // the status expected; 0 means 200
	// BodyContains, when set, must appear in the (first MaxBody bytes of the) body.
	BodyContains string
	// JSONField, when set, names a number in the JSON body by a dotted path (data.sessions,
	// items.0.count); it is the observed value, for the probe's tolerance. Otherwise the value
	// is the status.
	JSONField string
	Client    *http.Client // nil: a client that follows no redirect
}

func (h HTTP) Kind() string { return "http" }

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (h HTTP) Observe(ctx context.Context) Observation {
	resp, body, err := get(ctx, h.Client, h.URL, MaxBody)
	if err != nil {
		return Observation{Err: err}
	}
	want := h.Status
	if want == 0 {
		want = http.StatusOK
	}
	obs := Observation{Value: f64(float64(resp.StatusCode)), Detail: "status " + strconv.Itoa(resp.StatusCode)}
	if resp.StatusCode != want {
		obs.Fail = fmt.Sprintf("status %d, want %d", resp.StatusCode, want)
		return obs
	}
	if h.BodyContains != "" && !strings.Contains(string(body), h.BodyContains) {
		obs.Fail = fmt.Sprintf("the body (%d bytes) does not contain %q", len(body), h.BodyContains)
		return obs
	}
	if h.JSONField != "" {
		v, err := jsonField(body, h.JSONField)
		if err != nil {
			obs.Err = err
			return obs
		}
		obs.Value, obs.Detail = f64(v), fmt.Sprintf("status %d, %s = %s", resp.StatusCode, h.JSONField, format(v))
	}
	return obs
}

// jsonField finds the number at a dotted path in a JSON document.
func jsonField(body []byte, path string) (float64, error) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return 0, fmt.Errorf("the body is not JSON (%v), so it has no field %s", err, path)
	}
	cur := doc
	for i, part := range strings.Split(path, ".") {
		at := strings.Join(strings.Split(path, ".")[:i+1], ".")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[part]
			if !ok {
				return 0, fmt.Errorf("the JSON body has no field %s", at)
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(part)
			if err != nil || n < 0 || n >= len(c) {
				return 0, fmt.Errorf("the JSON body's %s is a list of %d; %q is not an index in it", strings.TrimSuffix(at, "."+part), len(c), part)
			}
			cur = c[n]
		default:
			return 0, fmt.Errorf("the JSON body's %s is not an object or a list", strings.TrimSuffix(at, "."+part))
		}
	}
	switch v := cur.(type) {
	case json.Number:
		return number(v.String())
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("the JSON body's %s is %s, not a number", path, clip(fmt.Sprint(cur), 40))
}

func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
