// Package live shows and publishes a run's numbers while it goes on: the progress view
// (Progress, StartProgress), the Prometheus endpoint (Metrics), Prometheus remote write
// (RemoteWrite) and the HdrHistogram interval logs (HistLogs). Each is an engine.Observer a Go
// caller attaches with engine.WithObserver; they read the run's View from tickers of their
// own, never from the workers. The command line (cmd/mcpchaos) parses their flags and builds
// them; this package writes no export and decides no exit status.
package live
