package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// parseAlloc parses src and returns the bytes allocated meanwhile and the error.
func parseAlloc(t *testing.T, name, src string) (uint64, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(name, []byte(src))
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// Deep nesting is refused by the tokenizer, before the parser sees it: 32,000 "[" (64 KB) took
// the parser 4 GB. The bound on allocation is generous (the scanner hands over a whole line of
// "- " at once); the parser's own use was a hundred times it.
func TestDeepNestingRefusedBeforeParsing(t *testing.T) {
	indented := strings.Builder{}
	for i := range 200 {
		fmt.Fprintf(&indented, "%s- \n", strings.Repeat(" ", 2*i))
	}
	for _, tc := range []struct {
		name, src string
		line, col int
	}{
		// Each collection is a level; the error is at the token that opens the one too many.
		{"flow sequences", strings.Repeat("[", 32000), 1, maxDepth + 1},
		{"flow mappings", strings.Repeat("{a: ", 20000), 1, 4*maxDepth + 1},
		{"compact block sequences", "name: t\ngroups: " + strings.Repeat("- ", 100000), 2, 9 + 2*(maxDepth-1)},
		{"indented block sequences", indented.String(), maxDepth + 1, 2*maxDepth + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alloc, err := parseAlloc(t, "deep.yaml", tc.src)
			want := fmt.Sprintf("deep.yaml:%d:%d: nested more than %d levels deep", tc.line, tc.col, maxDepth)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("got %v, want %s", err, want)
			}
			if alloc > 64<<20 {
				t.Errorf("allocated %d MB refusing it", alloc>>20)
			}
		})
	}
}

// Brackets, dashes and stars inside quotes, comments and plain text are not structure.
func TestShapeScanReadsOnlyStructure(t *testing.T) {
	deep := strings.Repeat("[", 3*maxDepth)
	src := edit(t, "name: t\n", "name: t # "+deep+"\ndescription: \""+deep+" \\\" "+deep+"\"\nx-a: '"+deep+" '' "+deep+"'\nx-b: don't "+deep+" * - ? 2*3\n")
	if _, err := Parse("ok.yaml", []byte(src)); err != nil {
		t.Fatal(err)
	}
}

func TestCAFileReadsAreBounded(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(notPEM, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, MaxCAFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"/dev/zero", "target.ca_file: /dev/zero is not a regular file"},
		{big, "is larger than 1048576 bytes"},
		{notPEM, "not.pem holds no PEM certificate"},
		{dir, "is a directory"},
		{filepath.Join(dir, "missing.pem"), "cannot read"},
	} {
		src := strings.Replace(urlBase, "  http_version: \"2\"\n", "  http_version: \"2\"\n  ca_file: "+tc.file+"\n", 1)
		_, err := Parse(filepath.Join(dir, "w.yaml"), []byte(src))
		if err == nil || !strings.Contains(err.Error(), "w.yaml:9:12: target.ca_file: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ca_file %s: %v, want 9:12 and %q", tc.file, err, tc.want)
		}
	}
}

// A workload's fleet is capped in all and per process, pointing to shards.
func TestClientsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: t\ntarget: {builtin: {session_ttl: 3s}}\nphases: [{duration: 1s, calls: true}]\ngroups:\n")
	for i := range 1000 { // 100 million clients
		fmt.Fprintf(&b, "  - {name: g%d, clients: 100000, policy: naive}\n", i)
	}
	_, err := Parse("huge.yaml", []byte(b.String()))
	want := "huge.yaml:15:5: groups[10].clients: brings the workload to 1100000 clients, more than 1000000 in all; run a large fleet as shards: --procs N"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("got %v, want one error: %s", err, want)
	}
	w, err := Parse("big.yaml", []byte(strings.Replace(base, "clients: 1\n    policy: naive\n", "clients: 100000\n    policy: naive\n  - {name: h, clients: 100000, policy: probe}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CheckClientsPerProcess(); err == nil || !strings.Contains(err.Error(), "one process would run 200000 clients, more than 100000; run a large fleet as shards") {
		t.Errorf("one process: %v", err)
	}
	if err := w.CheckClientsPerProcess(); err == nil || !strings.HasSuffix(err.Error(), "(here --procs 2 or more)") {
		t.Errorf("one process: %v, want it to name the processes needed", err)
	}
	if err := w.CheckClientsInProcesses(2); err != nil {
		t.Errorf("two processes of 100,000: %v", err)
	}
	w.Groups[0].Clients = 100001 // shard 0 of 2 holds 50,001 + 50,000
	if err := w.CheckClientsInProcesses(2); err == nil || !strings.Contains(err.Error(), "with --procs 2 a process would run 100001 clients, more than 100000; use --procs 3 or more") {
		t.Errorf("two processes of 100,001: %v", err)
	}
}

// A group's arguments are bounded as JSON after alias expansion, and refused at their line.
func TestArgumentsBoundedAsJSON(t *testing.T) {
	big := strings.Repeat("q", 6000)
	keys := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("a%d: *s", i)
		}
		return strings.Join(parts, ", ")
	}
	src := edit(t, "    policy: naive\n", "    policy: naive\n    arguments: {"+keys(50)+"}\n")
	_, err := Parse("args.yaml", []byte("x-s: &s \""+big+"\"\n"+src))
	// 50 values of 6,000 q and two quotes; keys "a0".."a9" and "a10".."a49"; 50 colons, 49
	// commas and two braces.
	size := 50*6002 + 10*4 + 40*5 + 50 + 49 + 2
	want := fmt.Sprintf("args.yaml:14:16: groups[0].arguments: are %d bytes as JSON once aliases are expanded, more than the %d allowed per call; send smaller arguments", size, MaxArgumentsBytes)
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	src = edit(t, "    policy: naive\n", "    policy: naive\n    arguments: {"+keys(20)+"}\n")
	w, err := Parse("args.yaml", []byte("x-s: &s \""+big+"\"\n"+src))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Groups[0].Arguments) != 20 {
		t.Errorf("got %d arguments, want 20", len(w.Groups[0].Arguments))
	}
}

// The expansion bound reports the alias that passes it, and nothing is decoded after it.
func TestExpansionReportedAtTheAlias(t *testing.T) {
	src := "x-s: &s \"" + strings.Repeat("s", 900_000) + "\"\nx-a: [*s, *s, *s, *s, *s]\n" + base
	alloc, err := parseAlloc(t, "exp.yaml", src)
	want := fmt.Sprintf("exp.yaml:2:19: the document grows past %d bytes here once its aliases are expanded", MaxExpandedBytes)
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want only %s", err, want)
	}
	if alloc > 128<<20 {
		t.Errorf("allocated %d MB refusing it", alloc>>20)
	}
}
