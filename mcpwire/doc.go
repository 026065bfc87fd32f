// Package mcpwire reads the JSON-RPC wire format the way both sides of mcpchaos need it: the
// session client and the reference server decode every message through Decode.
//
// It exists for one measured reason (see Decode) and must stay that small: the message types
// are the official Go SDK's (github.com/modelcontextprotocol/go-sdk/jsonrpc), not ours. The one
// other thing both sides must agree on is the _meta key naming a tool call's logical call
// (CallKey).
package mcpwire
