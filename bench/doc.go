// Package bench measures what a held session costs the tool, so that mcpchaos never becomes
// the bottleneck it is trying to find. One measurement runs in a process of its own (the
// `mcpchaos bench` command starts one per client kind), so that memory, goroutines and
// descriptors are read from /proc and the Go runtime without anything else in the process:
// it holds N sessions against a target URL (by default through embedded Toxiproxy, as a run
// does), then drives rounds of calls and times bare HTTP round trips beside probes.
//
// It must only ever talk to loopback targets the command started.
package bench
