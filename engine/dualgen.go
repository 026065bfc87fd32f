package engine

import (
	"fmt"
	"slices"

	"github.com/mcpchaos/mcpchaos/clients/wire"
)

// otherGeneration says, of a server that speaks both generations (server/discover named the
// stateless revision and a session-family version this client speaks: the Go SDK's, mcp-go's
// and the reference server do), which one the run did not measure, and notes why it measured
// the one it did: the workload's protocol chose. A team whose clients pin a 2025 revision
// needs the session story; one whose clients speak 2026-07-28 (mcp-go's and the Go SDK's
// clients try it first) needs the other, and says protocol: 2026-07-28. "" for a server of
// one generation.
func otherGeneration(n wire.Negotiated, target string, notes *[]string) string {
	if !slices.Contains(n.Supported, wire.ProtocolStateless) || !slices.ContainsFunc(n.Supported, wire.Supported) {
		return ""
	}
	measured, other, how := "session family", wire.Stateless, "its groups leave protocol out or name a 2025 revision; protocol: 2026-07-28 measures the stateless revision"
	if n.Generation == wire.Stateless {
		measured, other, how = "stateless revision "+wire.ProtocolStateless, wire.SessionFamily, "its groups say protocol: 2026-07-28; leave protocol out to measure the session family"
	}
	*notes = append(*notes, fmt.Sprintf("the target %s speaks both generations (server/discover named %q): this run measured the %s, as the workload's protocol chose (%s)",
		target, n.Supported, measured, how))
	return other.String()
}
