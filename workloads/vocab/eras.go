package vocab

// Which protocol generations the reference server speaks (a built-in target's era, and the era
// a restart brings replicas up in): both, the session family only (the 2025 revisions), or the
// stateless revision only (2026-07-28). Rolled in steps, they are a rolling upgrade across
// protocol eras behind one origin.
const (
	EraBoth      = "both"
	EraSession   = "session"
	EraStateless = "stateless"
)

// Eras lists the era values; the first is the default.
func Eras() []string { return []string{EraBoth, EraSession, EraStateless} }
