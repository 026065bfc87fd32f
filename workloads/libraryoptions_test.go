package workloads

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// library_options are checked where they are written: an option the library does not take at
// its key, a wrong value at the value, options under a policy that runs no library at the
// library_options key.
func TestLibraryOptions(t *testing.T) {
	group := func(g string) string { return edit(t, "  - name: g\n    clients: 1\n    policy: naive\n", g) }
	w, err := Parse("w.yaml", []byte(group("  - name: g\n    clients: 1\n    policy: ts-sdk\n    library_options: {maxRetries: 10, timeout: 5000, resetTimeoutOnProgress: true}\n")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"maxRetries": int64(10), "timeout": int64(5000), "resetTimeoutOnProgress": true}
	if got := w.Groups[0].LibraryOptions; !reflect.DeepEqual(got, want) {
		t.Errorf("options = %#v, want %#v", got, want)
	}
	for _, tc := range []struct {
		name, group string
		line, col   int
		msg         string
	}{
		{"misspelt option", "  - name: g\n    clients: 1\n    policy: ts-sdk\n    library_options:\n      maxRetry: 3\n", 14, 7, `unknown key "maxRetry"; allowed keys here: initialReconnectionDelay, maxReconnectionDelay, maxRetries`},
		{"option of another library", "  - name: g\n    clients: 1\n    policy: gosdk\n    library_options:\n      maxRetries: 3\n", 14, 7, `unknown key "maxRetries"`},
		{"wrong type", "  - name: g\n    clients: 1\n    policy: mcpgo\n    library_options:\n      ContinuousListening: yes please\n", 14, 28, "not a boolean; write true or false"},
		{"out of range", "  - name: g\n    clients: 1\n    policy: ts-client\n    library_options:\n      timeout: 0\n", 14, 16, "timeout is out of range"},
		{"older protocol for a TypeScript SDK", "  - name: g\n    clients: 1\n    policy: ts-sdk\n    protocol: 2025-06-18\n", 13, 15, "offers 2025-11-25 only"},
		{"no library", "  - name: g\n    clients: 1\n    policy: naive\n    library_options:\n      maxRetries: 3\n", 13, 5, "policy naive runs no client library"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(group(tc.group)))
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Errs) != 1 {
				t.Fatalf("want one validation error, got %v", err)
			}
			e := ve.Errs[0]
			if e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Msg, tc.msg) || !strings.Contains(e.Msg, "; ") {
				t.Errorf("got %d:%d %q, want %d:%d containing %q and a hint", e.Line, e.Col, e.Msg, tc.line, tc.col, tc.msg)
			}
		})
	}
}
