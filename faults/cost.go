package faults

// What one client connection held open through an embedded fault proxy (Shield over
// Embedded: the relay feeding Toxiproxy's chains in process, shield_chains.go) costs the
// process the proxy runs in, for the checks that plan how many sessions a process can hold.
// Measured with `mcpchaos bench --sessions 3000 --clients mcpchaos` (docs/performance.md, "The
// fault proxy"): 2.04–2.05 descriptors, 6.1 goroutines and 28.5–28.6 KiB of RSS per held
// session on the proxy's side; the figures below round up.
const (
	// ProxyDescriptorsPerConn: the client's socket accepted and the server's dialed.
	ProxyDescriptorsPerConn = 2
	// ProxyGoroutinesPerConn: Toxiproxy's reader, stage and writer for each direction.
	ProxyGoroutinesPerConn = 6
	// ProxyBytesPerConn: their stacks, Toxiproxy's link and the relay's two sides.
	ProxyBytesPerConn = 32 << 10
)
