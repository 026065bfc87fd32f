// Package wiredriver holds the drivers (drive.Driver) of the clients mcpchaos speaks for
// itself on its own wire session (package wire): Driver, whose every decision after a drop or
// a failure is the group's policy (the seed's naive client and its decision rule, probe): its
// tool calls with the policy's retries (wire.go), its GET stream held by a chain of
// goroutines, its replays and the policy's verdict on them (stream.go); and Stateless, the
// 2026-07-28 revision's requests re-issued when lost, and its listen streams (stateless.go).
//
// It counts only through the contract of package drive (a drive.Client's books, a drive.Env's
// recorder and books) and imports no fleet.
package wiredriver
