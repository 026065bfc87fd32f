package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/promtest"
	"github.com/mcpchaos/mcpchaos/results"
)

// A run pushed to a real Prometheus by --remote-write: the series arrive with the run's id and
// labels, their final values are the export's, and every query of the Grafana dashboard
// (deploy/grafana/mcpchaos.json), its panels', annotations' and variables', returns data
// about the run.
func TestRemoteWriteToPrometheusAndDashboard(t *testing.T) {
	base := promtest.Start(t, promtest.Options{RemoteWriteReceiver: true}).URL
	out, code, exp := cli(t, "run", "seed-incident-fast", "--remote-write", "http://ci:pw-not-shown@"+strings.TrimPrefix(base, "http://")+"/api/v1/write",
		"--remote-write-interval", "500ms", "--label", "release=v9.9", "--label", "ci.job=rw-test")
	// A starved machine can make the run itself fail (exit 1, "could not measure"): what is
	// tested here is what it wrote and pushed, which it does all the same.
	if code != 0 && code != 1 || exp == nil {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// Drops are allowed (a starved machine can fill the queue); the final values must arrive.
	mustContain(t, out, "mcpchaos: pushing metrics to http://[redacted]@", ", 0 failed, ")
	if strings.Contains(out, "pw-not-shown") {
		t.Errorf("the output shows the URL's password:\n%s", out)
	}
	id := exp.Run.ID
	sel := fmt.Sprintf(`run_id=%q,workload="seed-incident-fast",release="v9.9",ci_job="rw-test"`, id)
	if v := promQuery(t, base, "mcpchaos_run_finished{"+sel+"}"); len(v) != 1 || v[0].value != 1 {
		t.Fatalf("mcpchaos_run_finished: %+v, want one series at 1 (the final values)", v)
	}
	for _, g := range exp.Groups {
		for c, want := range g.Counters {
			got := promQuery(t, base, fmt.Sprintf("mcpchaos_%s_total{%s,group=%q}", c, sel, g.Name))
			if len(got) != 1 || got[0].value != float64(want) {
				t.Errorf("%s %s: Prometheus has %+v, the export %d", g.Name, c, got, want)
			}
		}
		for h, want := range g.Histograms {
			got := promQuery(t, base, fmt.Sprintf("mcpchaos_%s_seconds_count{%s,group=%q}", h, sel, g.Name))
			if len(got) != 1 || got[0].value != float64(want.Count) {
				t.Errorf("%s %s count: Prometheus has %+v, the export %d", g.Name, h, got, want.Count)
			}
		}
	}
	checkDashboard(t, base, exp)
}

// checkDashboard runs every query of the dashboard over the run's time, as Grafana would with
// the run chosen, once per group as the repeated row does.
func checkDashboard(t *testing.T, base string, exp *results.Export) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "mcpchaos.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Annotations struct{ List []struct{ Name, Expr string } }
		Templating  struct {
			List []struct{ Name, Type, Definition string }
		}
		Panels []struct {
			Type, Title, Repeat string
			Targets             []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("deploy/grafana/mcpchaos.json: %v", err)
	}
	var groups []string
	for _, g := range exp.Groups {
		groups = append(groups, g.Name)
	}
	vars := func(expr, group string) string {
		return strings.NewReplacer("$workload", exp.Run.Workload, "$run_id", exp.Run.ID, "$group", group,
			"$__rate_interval", "30s", "${datasource}", "").Replace(expr)
	}
	start, end := exp.Run.Start, time.Now()
	queries := 0
	for _, a := range d.Annotations.List {
		if a.Expr == "" {
			continue
		}
		queries++
		if s := promRange(t, base, vars(a.Expr, ".*"), start, end); len(s) == 0 {
			t.Errorf("annotation %q (%s): no data", a.Name, a.Expr)
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			queries++
			finite := false
			for _, g := range groups {
				s := promRange(t, base, vars(tg.Expr, g), start, end)
				if len(s) == 0 {
					t.Errorf("panel %q, group %s (%s): no data", p.Title, g, tg.Expr)
				}
				for _, x := range s {
					finite = finite || !math.IsNaN(x.value)
				}
			}
			// NaN is a quantile of no samples: fine when the run recorded none (a loaded machine
			// can change what happens), a failure when it did.
			if m := histOf.FindStringSubmatch(tg.Expr); !finite && (m == nil || samples(exp, m[1]) > 0) {
				t.Errorf("panel %q (%s): only NaN, in every group, though the export holds samples", p.Title, tg.Expr)
			}
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.*), (\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(SELECTOR, LABEL)", v.Name, v.Definition)
			continue
		}
		queries++
		q := url.Values{"match[]": {vars(m[1], ".*")}}
		var body struct{ Data []string }
		promGet(t, base+"/api/v1/label/"+m[2]+"/values?"+q.Encode(), &body)
		if len(body.Data) == 0 {
			t.Errorf("variable %s (%s): no values", v.Name, v.Definition)
		}
	}
	if queries < 30 {
		t.Errorf("only %d queries found in the dashboard: is its JSON read right?", queries)
	}
}

var histOf = regexp.MustCompile(`mcpchaos_(\w+)_seconds_bucket`)

// samples is how many samples the run recorded in histogram h, over its groups.
func samples(exp *results.Export, h string) int64 {
	var n int64
	for _, g := range exp.Groups {
		n += g.Histograms[h].Count
	}
	return n
}

// promSample is a value of a query's answer: an instant vector's, or one point of a range.
type promSample struct {
	metric map[string]string
	value  float64
}

func promGet(t *testing.T, u string, into any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Status, Error string
		Data          json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Status != "success" {
		t.Fatalf("%s: %v %s %s", u, err, env.Status, env.Error)
	}
	if err := json.Unmarshal(append(append([]byte(`{"data":`), env.Data...), '}'), into); err != nil {
		t.Fatal(err)
	}
}

func promValue(v []any) float64 {
	f, _ := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
	return f
}

// promQuery runs an instant query now.
func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	var body struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Value  []any
			}
		}
	}
	promGet(t, base+"/api/v1/query?"+url.Values{"query": {q}}.Encode(), &body)
	var out []promSample
	for _, r := range body.Data.Result {
		out = append(out, promSample{r.Metric, promValue(r.Value)})
	}
	return out
}

// promRange runs a range query from start to end, a point a second, and returns every point.
func promRange(t *testing.T, base, q string, start, end time.Time) []promSample {
	t.Helper()
	var body struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Values [][]any
			}
		}
	}
	promGet(t, base+"/api/v1/query_range?"+url.Values{"query": {q}, "start": {strconv.FormatInt(start.Unix()-1, 10)},
		"end": {strconv.FormatInt(end.Unix()+1, 10)}, "step": {"1"}}.Encode(), &body)
	var out []promSample
	for _, r := range body.Data.Result {
		for _, v := range r.Values {
			out = append(out, promSample{r.Metric, promValue(v)})
		}
	}
	return out
}
