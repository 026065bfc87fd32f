// Package hlog writes and reads a run's latency over time as HdrHistogram interval logs
// (.hlog, log format 1.3, the format HdrHistogram's HistogramLogProcessor and its plotters
// read): one file per histogram, one interval a second, one line per group in each interval
// (the group is the line's Tag). Values are microseconds, as in the export.
//
// A Writer takes the recorders' cumulative histograms at each tick and writes the difference
// from the previous tick; the intervals of a group therefore add up to the export's histogram
// of that group. It reads the recorders as any reader does (a Snapshot) and never from a
// worker. A Writer knows nothing of where its files end up: it writes the io.Writers it is
// given. Live (live.go) is the files of run --hlog: streamed into a directory of their own while
// the run goes on, moved into place whole once the export is written.
package hlog
