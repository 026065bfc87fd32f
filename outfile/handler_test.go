package outfile

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve-files hands out the regular files of its directory and nothing else.
func TestServeFiles(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "merged.json"), []byte(`{"schema_version":2}`), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "merged.hgrm"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "merged.hgrm", "probe.probe_latency.hgrm"), []byte("Value"), 0o644))
	must(os.WriteFile(filepath.Join(dir, ".merged.json.tmp-1"), []byte("half"), 0o644))
	secret := filepath.Join(t.TempDir(), "secret")
	must(os.WriteFile(secret, []byte("token"), 0o600))
	must(os.Symlink(secret, filepath.Join(dir, "link.json")))
	srv := httptest.NewServer(Handler(os.DirFS(dir)))
	defer srv.Close()
	get := func(method, p string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+p, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("GET", "/"); code != 200 || body != "merged.hgrm/probe.probe_latency.hgrm\nmerged.json\n" {
		t.Errorf("listing: %d %q", code, body)
	}
	if code, body := get("GET", "/merged.json"); code != 200 || body != `{"schema_version":2}` {
		t.Errorf("file: %d %q", code, body)
	}
	for _, p := range []string{"/link.json", "/merged.hgrm", "/nope.json", "/../secret", "/%2e%2e/secret"} {
		if code, body := get("GET", p); code == 200 || strings.Contains(body, "token") {
			t.Errorf("%s: %d %q, want refused", p, code, body)
		}
	}
	if code, _ := get("PUT", "/merged.json"); code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", code)
	}
}
