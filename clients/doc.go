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
//     the request loops, tool arguments, the group's report, the run's problems), and which
//     driver runs its clients (pickDriver, the one switch on a client kind). Its drivers are
//     packages of their own below it, behind a contract:
//   - fleet/drive: the contract between a group and its drivers: the Driver interface a kind
//     implements, the Client and Books interfaces through which a driver moves a client's
//     state and counts into the group's books (fleet's *Client and *Fleet implement them), the
//     session as a client holds it (Held), what the group hands its driver (Env: settings,
//     endpoint, recorder, truth, policy, and the judgements of an answer every kind makes
//     alike), and the one connect-and-retry loop of every driver (ConnectLoop);
//   - fleet/wiredriver: the wire session decided by a policy (the seed's naive client, probe)
//     with its GET stream, replays and verdicts, and the stateless revision's requests and
//     listen streams;
//   - fleet/libdriver: the client libraries (the Go SDK's, mcp-go's, the TypeScript SDKs' in
//     node workers, mcp-go v1.6.0's in a worker of its own): one application loop around a
//     library session, the outside view of its HTTP (sdkObserver), the inside view of its
//     calls (judge.go), and what the export says of a library;
//   - tsworker: the node worker that holds the TypeScript SDKs' clients for fleet (worker.mjs,
//     locked by package-lock.json), embedded in the binary, with where its libraries are
//     (Locate) or go (Install: `mcpchaos setup ts-libraries`), and its Go side: one node
//     process started, spoken to over JSON lines, and ended by its handle (worker.go). It
//     knows no fleet.
//
// Arrows run one way: fleet uses drive, wiredriver and libdriver; the drivers use drive and
// never fleet (libdriver uses tsworker and mcpgoworker too); drive, fleet and the drivers use
// wire, policy and truth, which use none of each other (tsworker only policy's kind names).
// None of them imports workloads, faults, results, the engine or the reference server. The
// names a workload may use (policies, libraries and their options, probe methods, protocol
// versions, log levels, the reference server's tools) are a workload file's words, defined in
// package vocab (workloads/vocab), which wire and policy take theirs from and which imports
// nothing of theirs: reading a workload needs none of clients.
//
// The drivers were files of fleet until issue 31, because each moves its client's state and
// counts into the group's per-client books (sessions, deaths, retries against the dead, turns
// not made), and a package of drivers looked as if it needed some forty exports of fleet
// (issue 17). The dependency is inverted instead: the drivers depend on a contract (drive),
// not on fleet. It is two interfaces the group implements, drive.Client (twenty-five
// methods, each one thing a driver does to one client's books: initialize or adopt a session,
// abandon it, account a request, apply events, probe, count an answer...) and drive.Books
// (nine: the group's books of failures), and one struct it hands over, drive.Env (settings,
// endpoint, recorder, truth, policy, and the judgements of an answer every kind makes alike).
// *fleet.Client's exported methods are exactly drive.Client's; the books and the rest of the
// group stay unexported; and a driver can do to the books only what the contract names.
package clients
