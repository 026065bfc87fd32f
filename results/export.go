// Package results turns a run's metrics into its exports: the JSON export (the record that
// later runs are compared with and that shards merge from) and the human summary.
//
// It reads metrics snapshots and run metadata; it never touches sessions, proxies or servers.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// SchemaVersion is the version of the JSON export's layout. Readers accept this and older.
const SchemaVersion = 1

// Export is the JSON export of one run.
type Export struct {
	SchemaVersion int       `json:"schema_version"`
	Run           Run       `json:"run"`
	Groups        []Group   `json:"groups"`
	Overall       Group     `json:"overall"`
	Faults        []FaultAt `json:"faults,omitempty"`
}

// Run is the run's metadata.
type Run struct {
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
}

// FaultAt records when a fault was really applied and removed on a group's proxy.
type FaultAt struct {
	Fault      string  `json:"fault"`
	Proxy      string  `json:"proxy"`
	AddedAtS   float64 `json:"added_at_s"`
	RemovedAtS float64 `json:"removed_at_s,omitempty"`
	Error      string  `json:"error,omitempty"`
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
}

// Histogram is a latency histogram: its summary, and the full HdrHistogram (V2 compressed,
// base64, "HISTFAAA…") that merges exactly with others.
type Histogram struct {
	Count int64  `json:"count"`
	MinUS int64  `json:"min_us"`
	P50US int64  `json:"p50_us"`
	P90US int64  `json:"p90_us"`
	P99US int64  `json:"p99_us"`
	P999  int64  `json:"p999_us"`
	MaxUS int64  `json:"max_us"`
	HDR   string `json:"hdr"`
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

func histogram(h *hdrhistogram.Histogram) (Histogram, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Histogram{}, err
	}
	out := Histogram{Count: h.TotalCount(), HDR: string(enc)}
	if out.Count > 0 {
		out.MinUS = h.Min()
		out.MaxUS = h.Max()
		out.P50US = h.ValueAtQuantile(50)
		out.P90US = h.ValueAtQuantile(90)
		out.P99US = h.ValueAtQuantile(99)
		out.P999 = h.ValueAtQuantile(99.9)
	}
	return out, nil
}

// Build assembles an export from the groups' snapshots; Overall merges them all.
func Build(run Run, snaps []*metrics.Snapshot) (*Export, error) {
	e := &Export{SchemaVersion: SchemaVersion, Run: run}
	all := &metrics.Snapshot{Name: "overall"}
	for _, s := range snaps {
		g, err := FromSnapshot(s)
		if err != nil {
			return nil, err
		}
		e.Groups = append(e.Groups, g)
		all.Merge(s)
	}
	o, err := FromSnapshot(all)
	if err != nil {
		return nil, err
	}
	e.Overall = o
	return e, nil
}

// WriteFile writes the export atomically: to a temporary file in the same directory, synced,
// then renamed over path, so a reader never sees half a file. Missing directories are made.
func WriteFile(path string, e *Export) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'))
}

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// ReadFile reads an export, accepting this schema version and older ones.
func ReadFile(path string) (*Export, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e Export
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("%s: not a mcpchaos export: %w", path, err)
	}
	if e.SchemaVersion < 1 || e.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d is not one this mcpchaos reads (1..%d)", path, e.SchemaVersion, SchemaVersion)
	}
	return &e, nil
}

// DefaultPath is where an export goes when --out is not given.
func DefaultPath(workload string, start time.Time) string {
	return filepath.Join("mcpchaos-results", fmt.Sprintf("%s-%s.json", workload, start.UTC().Format("20060102T150405Z")))
}
