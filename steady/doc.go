// Package steady checks whether the system under test is in its steady state: the probes of a
// workload's steady_state section (Chaos Toolkit's steady-state hypothesis, Litmus's probes),
// each an HTTP request, a command or a PromQL instant query, judged against a tolerance.
//
// A probe observes one value (an HTTP status or a JSON field of the body, a command's exit
// status, a query's sample) and a tolerance (vocab.Tolerance) says whether that value is
// steady. Every probe is bounded: in time (its timeout, and its context), in bytes read (a
// body, an output, a query answer), and in where it may reach (loopback or the target's own host: vocab.AllowedHost,
// checked when the workload is read).
//
// This package runs one probe once when asked. When to run it (before, after, continuously,
// during a fault), what the run does with a failure, and the export are the engine's and
// package results'. It starts no goroutine that outlives a call, and keeps no state.
package steady
