// Package libdriver holds the driver (drive.Driver) of the clients that are a real MCP client
// library: the official Go SDK's and mcp-go's in process (gosdk.go, mcpgo.go), the TypeScript
// SDKs' in node workers and mcp-go v1.6.0's in a worker of its own, pooled behind a loopback
// gateway (ts.go; the worker processes are packages clients/tsworker and clients/mcpgoworker).
// One application loop holds a library session and calls tools through it, never retrying
// (lib.go); every HTTP request a library sends is observed from outside (sdkObserver), every
// call's outcome judged from inside (judge.go); what the export says of a library, and the
// group's library-only API (Prepare, Close, Call, WorkerPIDs), is library.go's.
//
// It counts only through the contract of package drive (a drive.Client's books, a drive.Env's
// recorder and books) and imports no fleet.
package libdriver
