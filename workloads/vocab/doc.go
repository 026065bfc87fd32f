// Package vocab holds the words a workload file uses that the machinery also understands: the
// client policies and libraries (and each library's options), the protocol versions, the
// requests a server may send its clients, the reference server's tools, the fault types and
// their attributes, and the steady-state probes' tolerances and reach.
//
// Package workloads checks a file against these names; the packages that run a workload
// (clients/..., faults, steady) take their names from here, so that reading a workload file
// needs none of them. It must import nothing but the standard library, and do no I/O.
package vocab
