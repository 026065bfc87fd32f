package vocab

// The names a group's `policy` may take. ClientGoSDK is not a policy of ours: it runs the
// group's sessions on the official Go SDK's client, which makes its own decisions.
const (
	NameNaive   = "naive"
	NameProbe   = "probe"
	ClientGoSDK = "gosdk"
)

// Policies lists what a group's `policy` may name: the policies, then the client libraries.
func Policies() []string { return append([]string{NameNaive, NameProbe}, Libraries()...) }

// ProbeMethods lists the requests a probe may send; the first is the default.
func ProbeMethods() []string { return []string{"ping", "tools/list"} }
