// Package clients is the fleet of simulated MCP clients a run drives against a target: their
// sessions on the wire, what they decide after drops and failures, and what they measure.
//
// The rooms, by file:
//
//   - the wire (one MCP session of the session family, as a real client speaks it):
//     endpoint.go (initialize), session.go (POSTs, SSE replies and their resumption, the
//     cursor of every stream), reply.go (a response checked: id, result xor error, an object),
//     getstream.go (the GET stream), serverreq.go (the server's requests answered), sse.go,
//     transport.go and streaming.go (HTTP), errors.go (error classes);
//   - the fleet: fleet.go (a group, its scheduler), client.go (one client's session and its
//     accounting), fleetreport.go (tool arguments, error texts, the group's report),
//     problems.go (whether the run measured what it was asked);
//   - one driver per client kind: wiredriver.go and stream.go (the wire session, decided by a
//     Policy), sdkdriver.go (the official Go SDK's client, observed from outside),
//     stateless.go (the 2026-07-28 revision);
//   - the policies, decisions only: policy.go, naive.go, probe.go;
//   - truth.go: when a session died, exactly (the reference server) or estimated.
//
// The name lists a workload may use (policies, probes, protocols, the reference server's
// tools, log levels) are defined here, once; workloads validates against them.
//
// It must not know about workloads, faults, exports or the reference server's internals: it
// is handed a GroupConfig, an Endpoint, a recorder and a Truth, and counts into the recorder.
// Nothing on a hot path takes a lock shared by the whole fleet.
package clients
