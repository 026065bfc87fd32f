package mcpwire

// CallKey is the _meta key under which mcpchaos's clients name the logical call a tools/call
// belongs to, "GROUP/CLIENT/SEQ", the same on every retry and re-issue of that call. A server
// that counts executions per key (the reference server, the Go SDK stateless test peer) knows
// a call it ran twice as a fact.
const CallKey = "io.mcpchaos/call"

// NotificationSeq is the _meta key under which the reference server numbers the notifications
// it sends on listen streams (subscriptions/listen), one sequence for the whole server, so a
// client that misses some between a drop and its re-listen sees the gap.
const NotificationSeq = "io.mcpchaos/seq"
