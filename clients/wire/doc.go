// Package wire is one MCP client session on the wire, as a real client speaks it: the HTTP
// transport (TLS, proxies, same-origin redirects, capped header blocks, the streaming
// round-tripper), initialize and the session's POSTs (endpoint.go, session.go), replies checked
// and decoded (reply.go), SSE streams and their resumption (sse.go, getstream.go), the
// server's own requests answered (serverreq.go), the stateless 2026-07-28 revision's handshake
// (generation.go) and its listen stream (listen.go), error classes (errors.go), and the redaction of every text that leaves it
// (redact.go, with package redact). raw.go is the raw access `mcpchaos inspect` needs.
//
// It must not decide anything after a drop or a failure (that is a policy's job, package
// policy), keep a client's accounting or count a run's metrics beyond the server requests its
// Responder answers (package fleet), or know when a session died (package truth). Nothing it
// returns may carry a secret: errors and texts are redacted on the way out.
package wire
