package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpchaos/mcpchaos/metrics"
)

// MaxFileSize bounds an export file read back (1 GiB). A 10-minute run of two groups writes
// about 100 KiB; the limit only stops a wrong file from exhausting memory.
const MaxFileSize = 1 << 30

// FileError is an export file that cannot be used: unreadable, not an export, of a schema
// version this build does not read, or damaged or edited after it was written.
type FileError struct {
	Path string
	Msg  string // what is wrong; after a semicolon, what to do
	Err  error  // the underlying error, if any
}

func (e *FileError) Error() string { return e.Path + ": " + e.Msg }
func (e *FileError) Unwrap() error { return e.Err }

// ReadFile reads an export, accepting this schema version and older ones, and checks that
// it is whole and consistent (see Parse).
func ReadFile(path string) (*Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Msg: fmt.Sprintf("cannot read it (%v); give the path of a mcpchaos JSON export", unwrapPath(err)), Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &FileError{Path: path, Msg: fmt.Sprintf("cannot read it (%v)", err), Err: err}
	}
	return Parse(path, data)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse reads an export from data; name says where it came from, in errors. Besides the JSON
// itself it checks what a damaged or edited file would get wrong: every histogram decodes, has
// the geometry mcpchaos records with, and agrees with its summary; group names are unique;
// the overall counters are the sums of the groups'.
func Parse(name string, data []byte) (e *Export, err error) {
	defer func() {
		// A file is data: whatever it holds must give an error, never take the process down.
		if r := recover(); r != nil {
			e, err = nil, &FileError{Path: name, Msg: fmt.Sprintf("internal error reading it (%v); please report it with the file", r)}
		}
	}()
	fail := func(format string, args ...any) error {
		return &FileError{Path: name, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxFileSize {
		return nil, fail("larger than %d bytes, far more than any export; is it the right file?", MaxFileSize)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fail("empty; an export may have been cut short before it was written: run again, or restore the file")
	}
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return nil, jsonError(name, data, err)
	}
	switch {
	case probe.SchemaVersion == nil:
		return nil, fail("no schema_version: not a mcpchaos export (give a file written by mcpchaos run or merge)")
	case *probe.SchemaVersion < 1:
		return nil, fail("schema_version %d is not a version mcpchaos ever wrote; the file is damaged", *probe.SchemaVersion)
	case *probe.SchemaVersion > SchemaVersion:
		return nil, fail("schema_version %d is newer than this mcpchaos reads (1..%d); use the mcpchaos version that wrote it, or a newer one", *probe.SchemaVersion, SchemaVersion)
	}
	e = &Export{}
	if err := json.Unmarshal(trimmed, e); err != nil {
		return nil, jsonError(name, data, err)
	}
	if err := e.check(); err != nil {
		return nil, &FileError{Path: name, Msg: err.Error() + "; the file was edited or damaged after mcpchaos wrote it: restore it, or run again", Err: err}
	}
	return e, nil
}

// jsonError turns a JSON error into a positioned message; a file that ends early says so.
func jsonError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &se) && se.Offset >= int64(len(bytes.TrimRight(data, " \t\r\n")))):
		return &FileError{Path: name, Msg: "ends in the middle of the JSON (truncated): it was cut short, perhaps copied before the run finished; run again, or restore the file", Err: err}
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return &FileError{Path: name, Msg: fmt.Sprintf("%d:%d: not valid JSON (%v); is it a mcpchaos export?", line, col, err), Err: err}
	case errors.As(err, &te):
		line, col := lineCol(data, te.Offset)
		return &FileError{Path: name, Msg: fmt.Sprintf("%d:%d: %s holds %s where a mcpchaos export has %s; the file was edited or is not an export", line, col, te.Field, te.Value, te.Type), Err: err}
	}
	return &FileError{Path: name, Msg: fmt.Sprintf("not a mcpchaos export (%v)", err), Err: err}
}

func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// check verifies what JSON decoding cannot: see Parse.
func (e *Export) check() error {
	if len(e.Groups) == 0 {
		return errors.New("no groups")
	}
	if e.Run.Workload == "" {
		return errors.New("run.workload is empty")
	}
	seen := map[string]bool{}
	for i := range e.Groups {
		g := &e.Groups[i]
		if g.Name == "" || g.Name == "overall" {
			return fmt.Errorf("groups[%d] is named %q, which a group cannot be", i, g.Name)
		}
		if seen[g.Name] {
			return fmt.Errorf("group %q appears twice", g.Name)
		}
		seen[g.Name] = true
		if err := g.check(); err != nil {
			return fmt.Errorf("group %s: %w", g.Name, err)
		}
	}
	if err := e.Overall.check(); err != nil {
		return fmt.Errorf("overall: %w", err)
	}
	sum, err := e.total()
	if err != nil {
		return err
	}
	for _, c := range metrics.Counters() {
		if k := c.String(); e.Overall.Counters[k] != sum.Counters[k] {
			return fmt.Errorf("overall.counters.%s is %d but the groups' add up to %d", k, e.Overall.Counters[k], sum.Counters[k])
		}
	}
	for k, v := range sum.Errors {
		if e.Overall.Errors[k] != v {
			return fmt.Errorf("overall.errors.%s is %d but the groups' add up to %d", k, e.Overall.Errors[k], v)
		}
	}
	for k, h := range sum.Histograms {
		if e.Overall.Histograms[k].Count != h.Count {
			return fmt.Errorf("overall.histograms.%s holds %d samples but the groups' hold %d", k, e.Overall.Histograms[k].Count, h.Count)
		}
	}
	if e.Timeline != nil && (e.Timeline.IntervalS <= 0 || math.IsNaN(e.Timeline.IntervalS)) {
		return fmt.Errorf("timeline.interval_s is %v; it must be positive", e.Timeline.IntervalS)
	}
	return e.SteadyState.check() // results/steady.go
}

func (g *Group) check() error {
	if g.Clients < 0 {
		return fmt.Errorf("clients is %d", g.Clients)
	}
	if t := g.SessionTTL; t != nil && (t.DeclaredS < 0 || math.IsNaN(t.DeclaredS) || t.Mode != "sliding" && t.Mode != "absolute") {
		return fmt.Errorf("session_ttl is {declared_s %v, mode %q}: declared_s must be 0 or more seconds and mode sliding or absolute", t.DeclaredS, t.Mode)
	}
	for k, v := range g.Counters {
		if v < 0 {
			return fmt.Errorf("counters.%s is %d, and counters never go below 0", k, v)
		}
	}
	for _, h := range metrics.Hists() {
		name := h.String()
		hist, ok := g.Histograms[name]
		if !ok {
			// A histogram this build records and the writer did not (it came later): empty.
			if g.Histograms == nil {
				g.Histograms = map[string]Histogram{}
			}
			empty, err := histogram(metrics.NewHistogram())
			if err != nil {
				return err
			}
			g.Histograms[name] = empty
			continue
		}
		dec, err := decodeHDR(hist.HDR)
		if err != nil {
			return fmt.Errorf("histograms.%s.hdr: %w", name, err)
		}
		want := summarize(dec)
		if hist.MeanUS == 0 {
			want.MeanUS = 0 // version 1 had no mean; it is filled in below
		}
		got := hist
		got.HDR, got.hist = "", nil
		if got != want {
			return fmt.Errorf("histograms.%s: the summary (count %d, p50 %d, p99 %d, max %d µs) disagrees with its hdr (count %d, p50 %d, p99 %d, max %d µs)",
				name, got.Count, got.P50US, got.P99US, got.MaxUS, want.Count, want.P50US, want.P99US, want.MaxUS)
		}
		hist.hist = dec
		hist.MeanUS = summarize(dec).MeanUS
		g.Histograms[name] = hist
	}
	return nil
}

// decodeHDR decodes a V2 compressed HdrHistogram after checking, from its header alone, that
// it has the geometry mcpchaos records with: a hostile header could otherwise ask for a huge
// counts array.
func decodeHDR(enc string) (*hdrhistogram.Histogram, error) {
	if !strings.HasPrefix(enc, "HISTF") {
		return nil, errors.New("not a V2 compressed HdrHistogram (it must start with HISTF)")
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("not valid base64: %v", err)
	}
	if len(raw) < 8 {
		return nil, errors.New("too short to be a histogram")
	}
	n := int64(binary.BigEndian.Uint32(raw[4:8]))
	if n > int64(len(raw)-8) {
		return nil, fmt.Errorf("truncated: its header announces %d compressed bytes, %d are there", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return nil, fmt.Errorf("compressed payload is damaged: %v", err)
	}
	var hdr [40]byte
	if _, err := io.ReadFull(z, hdr[:]); err != nil {
		return nil, fmt.Errorf("compressed payload is damaged: %v", err)
	}
	digits := int64(binary.BigEndian.Uint32(hdr[12:16]))
	lowest := int64(binary.BigEndian.Uint64(hdr[16:24]))
	highest := int64(binary.BigEndian.Uint64(hdr[24:32]))
	if lowest != metrics.HistLowest || highest != metrics.HistHighest || digits != metrics.HistDigits {
		return nil, fmt.Errorf("geometry %d..%d µs at %d digits is not mcpchaos's (%d..%d at %d); it was not written by mcpchaos",
			lowest, highest, digits, metrics.HistLowest, metrics.HistHighest, metrics.HistDigits)
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("damaged: %v", err)
	}
	return h, nil
}
