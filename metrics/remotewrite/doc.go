// Package remotewrite pushes a run's live numbers to a Prometheus server by the remote write
// protocol 1.0 (a snappy-compressed protobuf WriteRequest POSTed to the server), the push
// counterpart of the --metrics-addr endpoint: the same series, gathered from the same
// collectors, with the run's labels added to each.
//
// A Pusher gathers on the caller's tick and hands the batch to a bounded queue that one
// goroutine of its own drains; a full queue drops the batch (counted), so a slow or absent
// Prometheus never holds up the run. Each batch is tried a bounded number of times, with
// backoff. Stop gathers once more and waits, for a bounded time, until the final values are
// sent.
//
// It must not: talk to any host but loopback unless told to (Options.Public), follow
// redirects, or show a URL's credentials (user-info, query) anywhere but in the request
// itself (package redact shows URLs).
package remotewrite
