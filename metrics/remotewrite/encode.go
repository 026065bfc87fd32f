package remotewrite

import (
	"math"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"
)

// The remote write 1.0 WriteRequest is four small messages (prometheus/prompb/remote.proto
// and types.proto):
//
//	WriteRequest { repeated TimeSeries timeseries = 1; }
//	TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//	Label        { string name = 1; string value = 2; }
//	Sample       { double value = 1; int64 timestamp = 2; }   // milliseconds since the epoch
//
// They are written here with protowire, which the module already has through
// client_model; a generated prompb would bring the whole Prometheus module graph for them.

// Series is one time series with one sample.
type Series struct {
	Labels []Label // sorted by name, __name__ first (it sorts first)
	Value  float64
}

// Label is a series label.
type Label struct{ Name, Value string }

// Flatten turns gathered metric families into series the way a Prometheus scrape of the text
// format would: counters, gauges and untyped metrics as one series each, histograms as
// _bucket{le} (cumulative, +Inf included), _sum and _count, summaries as {quantile}, _sum and
// _count. extra is added to every series.
func Flatten(mfs []*dto.MetricFamily, extra []Label) []Series {
	var out []Series
	for _, mf := range mfs {
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			base := make([]Label, 0, len(m.GetLabel())+len(extra)+2)
			for _, lp := range m.GetLabel() {
				base = append(base, Label{lp.GetName(), lp.GetValue()})
			}
			base = append(base, extra...)
			add := func(suffix string, v float64, more ...Label) {
				ls := append(append([]Label{{"__name__", name + suffix}}, base...), more...)
				sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
				out = append(out, Series{Labels: ls, Value: v})
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add("", m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add("", m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add("_bucket", float64(b.GetCumulativeCount()), Label{"le", formatFloat(b.GetUpperBound())})
				}
				add("_bucket", float64(h.GetSampleCount()), Label{"le", "+Inf"})
				add("_sum", h.GetSampleSum())
				add("_count", float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add("", q.GetValue(), Label{"quantile", formatFloat(q.GetQuantile())})
				}
				add("_sum", s.GetSampleSum())
				add("_count", float64(s.GetSampleCount()))
			default:
				add("", m.GetUntyped().GetValue())
			}
		}
	}
	return out
}

// formatFloat writes a bucket bound or quantile as the text format does (0.005, 1, 2.5, +Inf).
func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Marshal encodes series, each with one sample at ts (milliseconds since the epoch), as a
// WriteRequest.
func Marshal(series []Series, ts int64) []byte {
	var req []byte
	var tsBuf, buf []byte
	for _, s := range series {
		tsBuf = tsBuf[:0]
		for _, l := range s.Labels {
			buf = buf[:0]
			buf = protowire.AppendTag(buf, 1, protowire.BytesType)
			buf = protowire.AppendString(buf, l.Name)
			buf = protowire.AppendTag(buf, 2, protowire.BytesType)
			buf = protowire.AppendString(buf, l.Value)
			tsBuf = protowire.AppendTag(tsBuf, 1, protowire.BytesType)
			tsBuf = protowire.AppendBytes(tsBuf, buf)
		}
		buf = buf[:0]
		buf = protowire.AppendTag(buf, 1, protowire.Fixed64Type)
		buf = protowire.AppendFixed64(buf, math.Float64bits(s.Value))
		buf = protowire.AppendTag(buf, 2, protowire.VarintType)
		buf = protowire.AppendVarint(buf, uint64(ts))
		tsBuf = protowire.AppendTag(tsBuf, 2, protowire.BytesType)
		tsBuf = protowire.AppendBytes(tsBuf, buf)
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, tsBuf)
	}
	return req
}
