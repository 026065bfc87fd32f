package vocab

// How a session TTL counts (a workload's ttl_mode): sliding, from the session's last
// request (the default, as the SDK servers count), or absolute, from initialize however active
// the session is (gateways that cap a session's lifetime).
const (
	TTLSliding  = "sliding"
	TTLAbsolute = "absolute"
)

// TTLModes lists the ttl_mode values; the first is the default.
func TTLModes() []string { return []string{TTLSliding, TTLAbsolute} }
