// Package refserver is mcpchaos's reference MCP server: the default system under
// test, speaking the streamable-HTTP transport of the session family
// (protocol versions 2025-03-26, 2025-06-18 and 2025-11-25), and beside it the
// stateless 2026-07-28 revision (stateless.go: a request with Mcp-Method and no
// session id), whose listen streams get numbered notifications.
//
// It exists to be set into each regime that the session-liveness seed
// describes, which real SDK servers cannot be:
//
//   - the session store and the event log are separate: a session has a
//     sliding idle TTL (refreshed only by session-scoped POSTs), while each
//     event stays in the log for Retention counted from its emission, so
//     events may outlive their session;
//   - a GET carrying Last-Event-ID is, in the Permissive regime, answered
//     from the event log alone, so a replay can return 200 for a session that
//     is already dead (the seed's trap); in the Strict regime the session is
//     checked first and the replay tells the truth;
//   - the status and body for a dead session, and for an unknown cursor, are
//     configurable, as real servers disagree about them.
//   - what an open stream gets when there is nothing to say is configurable
//     too (keepalive.go): nothing, an SSE comment, a named `event: ping`, or a
//     data event without id:, as real servers differ there and clients treat
//     each differently behind an idle cutoff.
//
// The server knows the exact moment each session died ([Server.DeathTime]),
// which lets mcpchaos measure detection delay exactly against it.
//
// Like a production server it exposes its own Prometheus metrics (metrics.go:
// sessions held, event logs, requests by status, RSS, at [MetricsPath] of an
// [Instance]), can cap the sessions it holds (Config.MaxSessions: 503 beyond,
// as the Python SDK does) and can be told to leak: never reclaim a dead
// session (Config.Leak, leak.go), the server that session-churn catches.
//
// A [Cluster] is the production shape of the same server: replicas, each
// with its own session store, behind an embedded router that is sticky on
// Mcp-Session-Id (or hashes, or has no affinity), with the event log per
// replica, shared in memory, or in Redis Streams (redislog.go). It can be
// restarted replica by replica (a rolling deploy), lose its affinities
// (rebalance) and be scaled, and it keeps the cause of every death too:
// which replica, which fault ([Cluster.Death]).
//
// It is built to hold tens of thousands of open GET streams in one process:
// the only goroutine per session is the HTTP handler of an open stream; one
// shared ticker goroutine emits notifications, keepalives and reaps; the
// session store and the log store are sharded maps whose locks are held only
// for a map operation.
//
// What it must not do: it is a test fixture, not a production MCP server. It
// implements only what mcpchaos needs (ping, tools/list and two tools, echo
// and slow, logging/setLevel; server/discover and subscriptions/listen in the
// stateless revision), keeps everything in memory (a Redis event log
// aside, whose keys it deletes when it closes, and no one else's), and has
// no authentication. It must not reach for other packages of mcpchaos: clients,
// faults and metrics depend on it being a plain server on the wire, nothing
// more.
package refserver
