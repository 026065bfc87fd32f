package vocab

// Root is one of a client's roots, as roots/list answers it.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// The requests a server may send its client whose answers a workload may script.
const (
	MethodSampling    = "sampling/createMessage"
	MethodElicitation = "elicitation/create"
)

// LogLevels lists the levels logging/setLevel may ask, lowest first.
func LogLevels() []string {
	return []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}

// ReferenceTools lists the tools of the reference server (package refserver) that a group
// calling it may name; the first is the default. A group against a server given by URL names
// any tool.
func ReferenceTools() []string { return []string{"echo", "slow"} }
