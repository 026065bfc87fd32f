package vocab

// Protocol versions of the session family that mcpchaos's clients speak.
const (
	Protocol20251125 = "2025-11-25"
	Protocol20250618 = "2025-06-18"
	Protocol20250326 = "2025-03-26"
)

// ProtocolStateless is the stateless revision mcpchaos's clients speak.
const ProtocolStateless = "2026-07-28"

// Protocols lists the session-family versions a group may offer; the first is the default.
func Protocols() []string { return []string{Protocol20251125, Protocol20250618, Protocol20250326} }
