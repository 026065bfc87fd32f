// Package fleet is a client group at work: its clients (client.go: one client's sessions and
// their accounting), the scheduler of their request loops and the turns they take (fleet.go,
// turns.go), the tool arguments they send (toolargs.go), the group's report and error
// samples (fleetreport.go), whether the run measured what it was asked (problems.go), and
// clients that come and go, some without DELETE (churn.go).
//
// How a client holds its sessions and makes its calls is its driver, one per client kind, in
// packages of their own behind the contract of package drive: the wire session decided by a
// policy and the stateless revision (package wiredriver), the client libraries: the Go SDK's,
// mcp-go's, the TypeScript SDKs' in node workers (package libdriver, with what the export says
// of a library). The group picks one (pickDriver, driver.go: the only switch on the kind) and
// hands it a drive.Env; its *Client implements drive.Client and its books drive.Books, the
// one way a driver moves a client's state and counts into the same books every kind is
// judged by. The drivers import drive, never fleet; what a library kind adds to the group's
// API (Prepare, Close, Library, WorkerPIDs, Call) is passed on to libdriver (library.go).
// Adding a kind is a driver (a package, or a file of one) and one case in pickDriver.
//
// It must not know about workloads, faults, exports or the reference server's internals: it is
// handed a GroupConfig, a wire.Endpoint, a recorder and a truth.Truth, and counts into the
// recorder. Nothing on a hot path takes a lock shared by the whole fleet.
package fleet
