// Package clients holds no code: it is the map of the simulated MCP clients a run drives
// against a target, one package per room.
//
//   - wire: one MCP session on the wire, as a real client speaks it (transport and TLS, the
//     streaming round-tripper, initialize and POSTs, SSE and resumption, replies decoded, the
//     server's requests answered, the stateless revision's handshake, error classes, the
//     redaction of whatever leaves it);
//   - policy: what a client decides after a drop or a failure (naive, probe), and the names a
//     workload's policy and probe may take, the client libraries and their options included
//     (libraries.go);
//   - truth: when a session died, exactly (the reference server) or estimated;
//   - fleet: a group at work (its clients and their accounting, the scheduler and the turns of
//     the request loops, tool arguments, the group's report, the run's problems), and one
//     driver per client kind behind one interface (driver_*.go: wire, Go SDK, stateless, and
//     the client libraries: mcp-go, the TypeScript SDKs). The drivers are files of fleet, not
//     a package: each moves its client's state and counts into the fleet's per-client
//     accounting (sessions, deaths, retries against the dead, turns not made), which a
//     package of drivers could reach only through some forty exports of it;
//   - tsworker: the node worker that holds the TypeScript SDKs' clients for fleet (worker.mjs,
//     locked by package-lock.json), embedded in the binary, with where its libraries are
//     (Locate) or go (Install: `mcpchaos setup ts-libraries`), and its Go side: one node
//     process started, spoken to over JSON lines, and ended by its handle (worker.go). It
//     knows no fleet.
//
// Arrows run one way: fleet uses wire, policy, truth and tsworker; those use none of each
// other (tsworker only policy's kind names). None of them imports workloads, faults, results,
// the engine or the reference server. The names a workload may use (policies, libraries and
// their options, probe methods, protocol versions, log levels, the reference server's tools)
// are a workload file's words, defined in package vocab (workloads/vocab), which wire and
// policy take theirs from and which imports nothing of theirs: reading a workload needs none
// of clients.
package clients
