package vocab

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// The client kinds that run a real MCP client library instead of a policy of ours. Each is
// driven by the application loop of clients/fleet around the library's own session; what
// happens after a drop is the library's doing.
const (
	ClientMCPGo    = "mcpgo"      // github.com/mark3labs/mcp-go's client, in process (fleet/libdriver/mcpgo.go)
	ClientMCPGo16  = "mcpgo-v1.6" // mcp-go v1.6.0's client, in a worker process (clients/mcpgoworker)
	ClientTSSDK    = "ts-sdk"     // @modelcontextprotocol/sdk 1.x in node workers (fleet/libdriver/ts.go)
	ClientTSClient = "ts-client"  // @modelcontextprotocol/client 2.x in node workers (fleet/libdriver/ts.go)
)

// Libraries lists the client kinds that run a real library, ClientGoSDK first.
func Libraries() []string {
	return []string{ClientGoSDK, ClientMCPGo, ClientMCPGo16, ClientTSSDK, ClientTSClient}
}

// IsLibrary reports whether a group's policy names a client library.
func IsLibrary(kind string) bool { return slices.Contains(Libraries(), kind) }

// optionKind is the type of a library option's value.
type optionKind int

const (
	optBool   optionKind = iota
	optCount             // an integer >= 0
	optMillis            // milliseconds, an integer >= 1
	optFactor            // a number >= 1
)

// libraryOptions are the options each library kind takes, spelt as the library spells them.
var libraryOptions = map[string]map[string]optionKind{
	// mcp.StreamableClientTransport's fields.
	ClientGoSDK: {"MaxRetries": optCount, "DisableStandaloneSSE": optBool},
	// transport.WithContinuousListening: open the GET listener (off by default).
	ClientMCPGo: {"ContinuousListening": optBool},
	// v1.6.0 adds transport.WithContinuousListeningBackoff(initial, max): the listener's
	// reconnects back off (doubling from initial up to max) instead of one a second.
	ClientMCPGo16: {"ContinuousListening": optBool, "ContinuousListeningBackoffInitial": optMillis, "ContinuousListeningBackoffMax": optMillis},
	// reconnectionOptions of StreamableHTTPClientTransport, and the request options of callTool.
	ClientTSSDK:    tsOptions,
	ClientTSClient: tsOptions,
}

var tsOptions = map[string]optionKind{
	"maxRetries": optCount, "initialReconnectionDelay": optMillis, "maxReconnectionDelay": optMillis,
	"reconnectionDelayGrowFactor": optFactor, "timeout": optMillis, "resetTimeoutOnProgress": optBool,
}

// LibraryOptionNames lists the options a library kind takes, sorted.
func LibraryOptionNames(kind string) []string {
	var out []string
	for k := range libraryOptions[kind] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckLibraryOption checks one option of a library kind: its name and its value (as JSON
// would hold it: bool, int64, float64). The error says what to write instead.
func CheckLibraryOption(kind, name string, v any) error {
	opts, ok := libraryOptions[kind]
	if !ok {
		return fmt.Errorf("policy %s runs no client library, so it takes no library_options; use a library policy: %s", kind, strings.Join(Libraries(), ", "))
	}
	k, ok := opts[name]
	if !ok {
		return fmt.Errorf("%s takes no option %q; use one of %s", kind, name, strings.Join(LibraryOptionNames(kind), ", "))
	}
	n, isNum := Number(v)
	switch {
	case k == optBool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s is not a boolean; write true or false", name)
		}
	case !isNum:
		return fmt.Errorf("%s is not a number; write a number, e.g. %s: 10", name, name)
	case k == optCount && (n < 0 || n != math.Trunc(n) || n > 1000):
		return fmt.Errorf("%s is out of range; write a whole number from 0 to 1000", name)
	case k == optMillis && (n < 1 || n != math.Trunc(n) || n > 3_600_000):
		return fmt.Errorf("%s is out of range; write whole milliseconds from 1 to 3600000 (an hour)", name)
	case k == optFactor && (n < 1 || n > 100):
		return fmt.Errorf("%s is out of range; write a number from 1 to 100", name)
	}
	return nil
}

// Number reads a numeric option value as JSON or YAML decoding holds it.
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
