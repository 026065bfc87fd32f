// Package results turns a run's metrics into its exports and judges them: the JSON export (the
// record that later runs are compared with and that shards merge from), its CSV, .hgrm and
// JUnit companions, the human summary, thresholds judged against an export, compare (against
// one or several baselines) and merge. The names it judges by (metrics, thresholds,
// tolerances) are package gate's; group totals are summed in one place (Total).
//
// It reads metrics snapshots, run metadata and export files; it never touches sessions,
// proxies or servers. Everything it reads from a file is checked before it is believed: a
// damaged or edited export gives a *FileError naming the file and what is wrong.
package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/gate"
	"github.com/mcpchaos/mcpchaos/generator"
	"github.com/mcpchaos/mcpchaos/metrics"
	"github.com/mcpchaos/mcpchaos/outfile"
)

// SchemaVersion is the version of the JSON export's layout. Readers accept this and older:
//
//	1  run, groups, overall, faults
//	2  adds run.shard, run.merged_shards, run.aborted, thresholds, timeline, and mean_us in
//	   histogram summaries; nothing of version 1 changed meaning
//
// The layout is published as a JSON Schema in results/schema/ (Schema returns it).
const SchemaVersion = 2

// Export is the JSON export of one run (or of shards merged into one).
type Export struct {
	SchemaVersion int       `json:"schema_version"`
	Run           Run       `json:"run"`
	Groups        []Group   `json:"groups"`
	Overall       Group     `json:"overall"`
	Faults        []FaultAt `json:"faults,omitempty"`
	// Thresholds are the workload's thresholds as judged at the end of the run (v2).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Timeline is sampled about every second during the run, for timelines (v2).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Phases are the workload's phases as they ran, with exact times (v2).
	Phases []PhaseAt `json:"phases,omitempty"`
	// Actions and Topology: non-network faults and the reference server's replicas (actions.go).
	Actions  []ActionAt `json:"actions,omitempty"`
	Topology *Topology  `json:"topology,omitempty"`
	// Generator is how the load generator itself fared: its lag, CPU and whether it was
	// starved (package generator; v2, absent in exports of earlier versions).
	Generator *generator.Report `json:"generator,omitempty"`
	// SteadyState is the workload's steady-state probes and their runs; Rollbacks are its
	// rollbacks as they ran at the end (steady.go; v2, optional).
	SteadyState *SteadyState `json:"steady_state,omitempty"`
	Rollbacks   []ActionAt   `json:"rollbacks,omitempty"`
}

// Run is the run's metadata.
type Run struct {
	// ID names the run (8 hex digits): in the live metrics (run_id) and the progress view (v2).
	ID                 string    `json:"id,omitempty"`
	Tool               string    `json:"tool"`
	ToolVersion        string    `json:"tool_version"`
	Workload           string    `json:"workload"`
	WorkloadSource     string    `json:"workload_source"`
	WorkloadHash       string    `json:"workload_hash"`
	Target             string    `json:"target"`
	NegotiatedProtocol string    `json:"negotiated_protocol"`
	Start              time.Time `json:"start"`
	End                time.Time `json:"end"`
	PlannedSeconds     float64   `json:"planned_seconds"`
	Interrupted        bool      `json:"interrupted"`
	// DetectionDelayEstimated is true when session deaths were estimated from a declared TTL
	// rather than known exactly (the reference server knows them exactly).
	DetectionDelayEstimated bool `json:"detection_delay_estimated"`
	// Proxies maps each client group to the address of the Toxiproxy proxy it went through.
	Proxies map[string]string `json:"proxies,omitempty"`
	Error   string            `json:"error,omitempty"`
	// Generation is the protocol generation the target spoke: "session" (2025-03-26 …
	// 2025-11-25: sessions, GET streams, resumption) or "stateless" (2026-07-28: none of
	// them, so the session counters do not apply; see Notes) (v2).
	Generation string `json:"generation,omitempty"`
	// OtherGeneration is the generation the target also speaks and this run did not measure
	// ("stateless" or "session"), when server/discover named both; a workload's groups choose
	// with protocol: (2026-07-28 for the stateless revision, else the session family) (v2).
	OtherGeneration string `json:"other_generation,omitempty"`
	// NotObservable lists, per group, the metrics its clients could not be measured on (a
	// gosdk group's internals are the SDK's): their zeros mean "not seen", not "none" (v2).
	NotObservable map[string][]string `json:"not_observable,omitempty"`
	// Libraries says, per group that ran a real client library, which and what it did (v2).
	Libraries map[string]Library `json:"libraries,omitempty"`
	// Withheld marks, per group, the figures a reader must not take as measured, each with why:
	// NotApplicable (the target keeps no sessions: nothing to drop, die or resume), or
	// EstimateRefuted (the run saw sessions answer after their estimated death, so every figure
	// derived from that estimate is wrong) or ServesAnyID (the server serves ids it never
	// issued, so no stale event can be told from a live one). The summary, compare and the report print the mark
	// in place of the number (v2).
	Withheld map[string]map[string]string `json:"withheld,omitempty"`
	// Notes say in words what the numbers cannot: a stateless target, estimated deaths, where
	// the proxies were (v2).
	Notes []string `json:"notes,omitempty"`
	// Findings are what the server did wrong that the run counted without failing on it, each
	// named by its counter (a protocol violation: errors.protocol); a threshold on the counter
	// makes one fail the gate (v2).
	Findings []string `json:"findings,omitempty"`
	// Aborted says why a threshold with abort_on_fail stopped the run early (v2).
	Aborted string `json:"aborted,omitempty"`
	// Shard is set when this run was one shard of a fleet (mcpchaos run --shard) (v2).
	Shard *Shard `json:"shard,omitempty"`
	// Labels say what was tested (run --label key=value: release, commit, environment); compare
	// shows them and the report puts them on its trend axis (v2).
	Labels map[string]string `json:"labels,omitempty"`
	// MergedShards lists the shards an export was merged from (mcpchaos merge) (v2).
	MergedShards []MergedShard `json:"merged_shards,omitempty"`
	// SessionLeak is the session-leak check of a churn workload against the reference server
	// (sessionleak.go) (v2).
	SessionLeak *SessionLeak `json:"session_leak,omitempty"`
}

// The marks of Run.Withheld.
const (
	NotApplicable   = "not applicable"
	EstimateRefuted = "estimate refuted"
	// ServesAnyID: the server answered a session id it never issued as live (mcp-go's
	// default id mode), so neither a success nor an event tells a dead session from a live
	// one, and no death the run estimates can be checked against what the server did.
	ServesAnyID = "server serves any id"
)

// WithheldWhy says why group's metric is withheld, "" when it is not.
func (r *Run) WithheldWhy(group, metric string) string {
	return r.Withheld[group][metric]
}

// WithheldWhy says why the export withholds group's metric ("" when it does not): a
// histogram's percentile (detection_delay.p99) is withheld with its histogram, and overall's
// figure with any group's.
func (e *Export) WithheldWhy(group, metric string) string {
	base, _, _ := strings.Cut(metric, ".")
	for g, ms := range e.Run.Withheld {
		if why := ms[base]; why != "" && (g == group || group == "overall") {
			return why
		}
	}
	return ""
}

// Withhold marks group's metrics as withheld for why (NotApplicable, EstimateRefuted); a mark
// already set stays.
func (r *Run) Withhold(group, why string, metrics ...string) {
	if r.Withheld == nil {
		r.Withheld = map[string]map[string]string{}
	}
	if r.Withheld[group] == nil {
		r.Withheld[group] = map[string]string{}
	}
	for _, m := range metrics {
		if r.Withheld[group][m] == "" {
			r.Withheld[group][m] = why
		}
	}
}

// Shard identifies one part of a sharded run: Index counts from 0 to Count-1.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the --start-at time the shards agreed on, when one was given.
	StartAt *time.Time `json:"start_at,omitempty"`
	// LateS is how many seconds after StartAt a late shard started (its pod was scheduled
	// after the others had begun): it joined rather than failing the run (v2).
	LateS float64 `json:"late_s,omitempty"`
}

func (s *Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MergedShard records one shard that went into a merged export.
type MergedShard struct {
	ID          string    `json:"id,omitempty"` // the shard's own run id (v2)
	Index       int       `json:"index"`
	Count       int       `json:"count"`
	File        string    `json:"file"`
	ToolVersion string    `json:"tool_version"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Interrupted bool      `json:"interrupted"`
	Aborted     string    `json:"aborted,omitempty"`
	Error       string    `json:"error,omitempty"`
	// StartAt and LateS are the shard's (Shard): a merge is no shard, so they are kept here (v2).
	StartAt *time.Time `json:"start_at,omitempty"`
	LateS   float64    `json:"late_s,omitempty"`
}

// FaultAt records when a fault was really applied and removed on a group's proxy.
type FaultAt struct {
	Fault      string  `json:"fault"`
	Proxy      string  `json:"proxy"`
	AddedAtS   float64 `json:"added_at_s"`
	RemovedAtS float64 `json:"removed_at_s,omitempty"`
	Error      string  `json:"error,omitempty"`
	// Shard is the shard whose proxy it was, in a merged export (v2).
	Shard *int `json:"shard,omitempty"`
}

// Group is one client group's numbers (or the overall numbers).
type Group struct {
	Name                string               `json:"name"`
	Policy              string               `json:"policy,omitempty"`
	Clients             int                  `json:"clients"`
	Counters            map[string]int64     `json:"counters"`
	Errors              map[string]int64     `json:"errors"`
	FalseHealthySeconds float64              `json:"false_healthy_seconds"`
	RetryAmplification  float64              `json:"retry_amplification"`
	Histograms          map[string]Histogram `json:"histograms"`
	// Causes splits the transport errors by whose they are, and counts the late calls (v2,
	// absent in exports of earlier versions: causes.go).
	Causes *Causes `json:"causes,omitempty"`
	// SessionTTL is the session TTL the workload declared for the target, beside which the
	// session_life histogram (what the server's answers showed) is read (v2; nil in exports
	// made before it).
	SessionTTL *SessionTTL `json:"session_ttl,omitempty"`
}

// SessionTTL is a declared session TTL: DeclaredS 0 when none is declared.
type SessionTTL struct {
	DeclaredS float64 `json:"declared_s"`
	Mode      string  `json:"mode"` // sliding (from the last request) or absolute (from initialize)
}

// DeclaredTTL is a workload's declared TTL in the export's form; mode "" is sliding.
func DeclaredTTL(ttl time.Duration, mode string) *SessionTTL {
	if mode == "" {
		mode = "sliding"
	}
	return &SessionTTL{DeclaredS: max(0, ttl.Seconds()), Mode: mode}
}

// String says the declared TTL in words: "3 s", "3 s, absolute", "none".
func (t *SessionTTL) String() string {
	if t == nil || t.DeclaredS <= 0 {
		return "none"
	}
	s := strconv.FormatFloat(t.DeclaredS, 'f', -1, 64) + " s"
	if t.Mode == "absolute" {
		s += ", absolute"
	}
	return s
}

// Histogram is a latency histogram: its summary, and the full HdrHistogram (V2 compressed,
// base64, "HISTFAAA…") that merges exactly with others. The summary is derived from the
// HdrHistogram; readers check that they agree.
type Histogram struct {
	Count  int64   `json:"count"`
	MinUS  int64   `json:"min_us"`
	P50US  int64   `json:"p50_us"`
	P90US  int64   `json:"p90_us"`
	P99US  int64   `json:"p99_us"`
	P999US int64   `json:"p999_us"`
	MaxUS  int64   `json:"max_us"`
	MeanUS float64 `json:"mean_us"` // v2
	HDR    string  `json:"hdr"`

	hist *hdrhistogram.Histogram // decoded HDR, set by Build and ReadFile; never modified
}

// Decoded is the full histogram. It is decoded when the export was read; the caller must not
// modify it (Clone it first).
func (h Histogram) Decoded() (*hdrhistogram.Histogram, error) {
	if h.hist != nil {
		return h.hist, nil
	}
	return decodeHDR(h.HDR)
}

// quantile is a percentile the summary holds, without decoding.
func (h Histogram) quantile(pct float64) (int64, bool) {
	switch pct {
	case 50:
		return h.P50US, true
	case 90:
		return h.P90US, true
	case 99:
		return h.P99US, true
	case 99.9:
		return h.P999US, true
	case 100:
		return h.MaxUS, true
	}
	return 0, false
}

// FromSnapshot builds a group's export from a metrics snapshot.
func FromSnapshot(s *metrics.Snapshot) (Group, error) {
	g := Group{
		Name:                s.Name,
		Policy:              s.Policy,
		Clients:             s.Clients,
		Counters:            make(map[string]int64),
		Errors:              make(map[string]int64),
		FalseHealthySeconds: s.FalseHealthySeconds,
		RetryAmplification:  s.RetryAmplification(),
		Histograms:          make(map[string]Histogram),
	}
	for _, c := range metrics.Counters() {
		g.Counters[c.String()] = s.Counter(c)
	}
	for i, n := range s.Errors {
		g.Errors[metrics.ErrorKind(i).String()] = n
	}
	for _, h := range metrics.Hists() {
		hist, err := histogram(s.Hist(h))
		if err != nil {
			return g, fmt.Errorf("%s %s: %w", s.Name, h, err)
		}
		g.Histograms[h.String()] = hist
	}
	return g, nil
}

// HistogramOf is h in the export's form: its summary and its encoding.
func HistogramOf(h *hdrhistogram.Histogram) (Histogram, error) { return histogram(h) }

func histogram(h *hdrhistogram.Histogram) (Histogram, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Histogram{}, err
	}
	out := summarize(h)
	out.HDR = string(enc)
	out.hist = h
	return out, nil
}

// summarize is a histogram's summary (without its encoding).
func summarize(h *hdrhistogram.Histogram) Histogram {
	out := Histogram{Count: h.TotalCount()}
	if out.Count > 0 {
		out.MinUS = h.Min()
		out.MaxUS = h.Max()
		out.P50US = h.ValueAtQuantile(50)
		out.P90US = h.ValueAtQuantile(90)
		out.P99US = h.ValueAtQuantile(99)
		out.P999US = h.ValueAtQuantile(99.9)
		out.MeanUS = math.Round(h.Mean()*1000) / 1000
	}
	return out
}

// Build assembles an export from the groups' snapshots; Overall adds them all up (Total).
func Build(run Run, snaps []*metrics.Snapshot) (*Export, error) {
	e := &Export{SchemaVersion: SchemaVersion, Run: run}
	for _, s := range snaps {
		g, err := FromSnapshot(s)
		if err != nil {
			return nil, err
		}
		e.Groups = append(e.Groups, g)
	}
	if err := e.Tally(); err != nil {
		return nil, err
	}
	return e, nil
}

// Tally sets what the groups add up to: Overall (Total of every group) and each library's
// background rate from its counter and the run's length. Build tallies; a merge of shards
// tallies again once the groups are merged.
func (e *Export) Tally() error {
	o, err := e.total()
	if err != nil {
		return err
	}
	e.Overall = o
	e.rateLibraries()
	return nil
}

// Group returns the named group, or the overall numbers for "overall"; nil if there is none
// (or no export). A nil group's numbers read zero (Counter, Error, Histogram): a caller for
// whom a misspelt name must fail rather than read zero uses LookupGroup.
func (e *Export) Group(name string) *Group {
	if e == nil {
		return nil
	}
	if name == "overall" {
		return &e.Overall
	}
	for i := range e.Groups {
		if e.Groups[i].Name == name {
			return &e.Groups[i]
		}
	}
	return nil
}

// LookupGroup returns the named group, or the overall numbers for "overall"; for a name the
// export lacks, an error that names the groups it has (and the likeliest one meant).
func (e *Export) LookupGroup(name string) (*Group, error) {
	if e == nil {
		return nil, errors.New("no export to look up a group in (the run returned none; its error says why)")
	}
	if g := e.Group(name); g != nil {
		return g, nil
	}
	names := make([]string, 0, len(e.Groups)+1)
	for _, g := range e.Groups {
		names = append(names, g.Name)
	}
	names = append(names, "overall")
	return nil, fmt.Errorf("the export has no group %q; %suse one of %s", name, gate.DidYouMean(name, names), strings.Join(names, ", "))
}

// WriteFile writes the export as outfile writes (a regular file atomically, a device or FIFO
// in place, "-" to standard output), so a reader never sees half a file.
func WriteFile(path string, e *Export) error {
	return WriteFileContext(context.Background(), path, e)
}

// WriteFileContext writes the export as WriteFile does; writing to a device or a FIFO also ends
// when ctx is done, the export then going beside it (outfile.Diverted).
func WriteFileContext(ctx context.Context, path string, e *Export) error {
	return outfile.WriteWithContext(ctx, path, os.Stdout, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // thresholds read "p99 < 50ms", not "p99 \u003c 50ms"
		return enc.Encode(e)
	})
}

// WriteFileWith writes a file (as WriteFile does) with what write produces.
func WriteFileWith(path string, write func(w io.Writer) error) error {
	return outfile.WriteWith(path, os.Stdout, write)
}

// DefaultPath is where an export goes when --out is not given.
func DefaultPath(workload string, start time.Time) string {
	return filepath.Join("mcpchaos-results", fmt.Sprintf("%s-%s.json", workload, start.UTC().Format("20060102T150405Z")))
}
