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
	// BackgroundPerSecond is the group's dead_session_background_requests divided by the
	// run's length in seconds: how hard the library kept at its dead sessions on its own.
	BackgroundPerSecond float64 `json:"dead_session_background_requests_per_second"`
}

// rateLibraries sets each library's background requests per second from its group's counter
// and the run's length: after a run's export is built, and again after shards merge.
func (e *Export) rateLibraries() {
	secs := e.Run.End.Sub(e.Run.Start).Seconds()
	for i := range e.Groups {
		g := &e.Groups[i]
		lib, ok := e.Run.Libraries[g.Name]
		if !ok {
			continue
		}
		lib.BackgroundPerSecond = 0
		if secs > 0 {
			lib.BackgroundPerSecond = float64(g.Counters["dead_session_background_requests"]) / secs
		}
		e.Run.Libraries[g.Name] = lib
	}
}
