// Package bench measures what a held session costs the tool, so that mcpchaos never becomes
// the bottleneck it is trying to find.
//
// A measurement is two processes: the measuring process (Hold) holds N sessions of one client
// kind against a target URL, drives rounds of calls, and times probes beside bare HTTP round
// trips; the parent (Measure) reads the measuring process's memory (RSS and PSS), descriptors
// and CPU from /proc while that process stands still at a quiet moment, waiting on its pipe.
// So nothing the benchmark itself allocates to take a reading is counted: the measuring process
// only reports runtime.NumGoroutine, a counter. Unless told otherwise, the sessions go through
// embedded Toxiproxy, which runs in a third process (ServeProxy) measured the same way, so the
// client's figures are the client's alone.
//
// It must only ever talk to loopback targets, and must not read or signal any process it did
// not start.
package bench
