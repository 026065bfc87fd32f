// Package faults injects network faults between the simulated MCP clients and
// the server they talk to: the drops, resets, latency and outages a load
// balancer or a flaky network inflicts on streamable-HTTP sessions.
//
// Each client group connects through its own Toxiproxy proxy, run in-process
// by Embedded, or created on a toxiproxy-server by External under a per-run
// name prefix (Clean removes what a killed run left there). A workload names faults by type (vocab.Toxics, checked by ValidateToxic);
// RunSchedule adds each one to its groups' proxies for its window and takes it
// away again. Besides Toxiproxy's own toxics, the package adds idle_timeout,
// the load-balancer idle drop that ends an SSE stream without ending its
// session, down, which takes a whole proxy away for a while, and half_open (halfopen.go), the
// zombie stream: a GET stream's client side reset while the server's side is held open.
//
// Beside toxics, a schedule holds actions (action.go, one file per kind):
// restart, rebalance and scale act on the reference server's Topology (a
// rolling deploy, a load balancer losing affinity, an autoscaler); exec runs
// the user's own deploy command and wait_for waits for readiness, for a real
// target. RunActions carries them out one after another.
//
// What it must not do:
//   - Listen anywhere but loopback. Proxies bind 127.0.0.1 only; a fault proxy
//     reachable from the network would let others into the run and could
//     disturb real traffic. The upstream is whatever target the caller names.
//   - Inject a toxic with a toxicity other than 1.0. Toxiproxy re-draws
//     toxicity per connection whenever any toxic on the proxy changes, so a
//     fraction would hit an unknowable subset of sessions and the numbers
//     could not be attributed to the fault; a toxicity of 0 never fires at
//     all. To fault part of a fleet, put that part in its own client group.
//   - Leave anything behind. Whatever it added it removes, on every exit path:
//     RunSchedule removes its faults when it returns, Injector.Close removes
//     every proxy; a server socket half_open holds is closed after its hold or by Close.
//   - Run anything the workload did not name, or kill anything it did not
//     start: an exec command runs in its own process group, and only that
//     group is killed, on timeout or when the run ends.
//   - Wait without bound. A Toxiproxy call that cannot finish (a peer that
//     reads nothing holds a toxic chain that cannot be paused) is abandoned
//     after CallBound with a note (ErrAbandoned); Close is bounded the same way.
//   - Write logs. Toxiproxy's loggers are silenced so nothing writes over the
//     progress display; errors are returned or reported through callbacks.
package faults
