// Package prom exposes a run's live numbers to Prometheus: the recorders' counters, errors,
// states and histograms (Collector), the run's phase and faults (RunCollector), and the load
// generator's own figures (GeneratorCollector). Every collector reads at scrape time and
// never slows a worker down.
//
// It is a package of its own so that what only needs the metric names (package gate, and
// through it workloads) does not link the Prometheus client.
package prom
