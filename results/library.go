package results

// Library says which client library a group ran (a policy of kind gosdk, mcpgo, ts-sdk or
// ts-client) and what the library did, in the export's run metadata (v2, optional): a later
// run with another version of the library is compared with this one like any run.
type Library struct {
	Kind    string `json:"kind"`
	Name    string `json:"library"`
	Version string `json:"version"` // pinned by go.mod or the worker's package-lock.json
	// Options are the group's library_options, as given.
	Options map[string]any `json:"options,omitempty"`
	// NegotiatedProtocol is the protocol version the server agreed with the library.
	NegotiatedProtocol string `json:"negotiated_protocol,omitempty"`
	// ErrorClasses counts the errors the library gave the application, by the library's
	// own class (ErrSessionMissing, McpError(-32001), SdkHttpError(CLIENT_HTTP_NOT_IMPLEMENTED)…).
	ErrorClasses map[string]int64 `json:"error_classes,omitempty"`
}
