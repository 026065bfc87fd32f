package gate

import (
	"fmt"
	"testing"
)

func TestDidYouMean(t *testing.T) {
	allowed := []string{"session_ttl", "retention", "idle_timeout", "tools/list"}
	for in, want := range map[string]string{
		"sesion_ttl": "session_ttl", "SessionTTL": "session_ttl", "retension": "retention",
		"idle": "idle_timeout", "tools_list": "tools/list", "zzz": "",
	} {
		got := DidYouMean(in, allowed)
		if want == "" && got != "" || want != "" && got != fmt.Sprintf("did you mean %q? ", want) {
			t.Errorf("DidYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}
