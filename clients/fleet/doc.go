// Package fleet is a client group at work: its clients (client.go: one client's sessions and
// their accounting), the scheduler of their request loops and the turns they take (fleet.go,
// turns.go), the tool arguments they send (toolargs.go), the group's report and error
// samples (fleetreport.go), whether the run measured what it was asked (problems.go), and
// clients that come and go, some without DELETE (churn.go).
//
// How a client holds its sessions and makes its calls is its driver, one per client kind
// behind the driver interface (driver.go), each in files of its own named driver_*.go: the
// wire session decided by a policy (driver_wire.go, driver_wire_stream.go), the official Go
// SDK's client observed from outside (driver_gosdk.go), the stateless revision
// (driver_stateless.go), and the other client libraries (docs/libraries.md): the application
// loop around a library session (driver_lib.go) with the inside view of its calls
// (driver_lib_judge.go), mcp-go's client (driver_mcpgo.go), the TypeScript SDKs' clients in
// node workers, pooled by driver_ts.go (the worker process and its JSON-lines protocol are
// clients/tsworker), and what the export says of a library (library.go). Adding a kind is a
// new driver file and one case in pickDriver. The drivers live here, not in a package of their
// own, because they share the fleet's per-client accounting: a driver is a client's life, it
// moves the client's state and counts its sessions, deaths, retries and turns into the same
// unexported books every kind is judged by (a package of drivers needed about forty exports
// of fleet, decided in issue 17).
//
// It must not know about workloads, faults, exports or the reference server's internals: it is
// handed a GroupConfig, a wire.Endpoint, a recorder and a truth.Truth, and counts into the
// recorder. Nothing on a hot path takes a lock shared by the whole fleet.
package fleet
