package workloads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The hostile corpus: workload files built to make the YAML parser or the decoder spend memory
// or time (the issue-20 bypasses among them). Small ones are files in testdata/hostile, each
// saying in its first two lines what it is and what must happen ("# want: ok", or a piece of the
// error; an empty want accepts any refusal); the large ones are generated here so that the
// repository stays small. Every one is read in a process of its own, which reports its peak
// resident memory and CPU time: each is refused with file:line:col, or accepted, within
// hostileCPU and hostileRSS.
const (
	hostileCPU = time.Second
	hostileRSS = 256 << 20
)

type hostileCase struct {
	name, what, want string
	data             []byte
}

// hostileHead is a valid workload that generated cases extend: parse_test.go's base up to
// its faults.
var hostileHead = base[:strings.Index(base, "faults:")]

func generatedHostile() []hostileCase {
	rep := strings.Repeat
	list := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ", ")
	}
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	return []hostileCase{
		// The bypasses of issue 20.
		{"brackets-32000", "32,000 nested [ (64 KB)", "nested more than 64 levels", []byte(rep("[", 32000))},
		{"flowmap-after-quote-line", "20,000 {a: after a ' continuation line", "nested more than 64 levels",
			[]byte(hostileHead + "description: first\n  'second\nx-a: " + rep("{a: ", 20000) + "\n")},
		{"aliases-5000-after-literal", "5,000 aliases after a ' line in a | block scalar", "more than 200 aliases",
			[]byte(hostileHead + "description: |\n  'quoted\nx-v: &v 1\nx-a: [" + list(5000, func(int) string { return "*v" }) + "]\n")},
		{"arguments-190-aliases-900k", "190 aliases to one 900 KB string in arguments", "once its aliases are expanded",
			[]byte("x-s: &s \"" + rep("s", 900_000) + "\"\n" + hostileHead + "    arguments: {" + list(190, func(i int) string { return fmt.Sprintf("a%d: *s", i) }) + "}\n")},
		{"x-keys-60000", "60,000 keys under an x- key", "a mapping with more than 1000 keys",
			[]byte(hostileHead + "x-a:\n" + lines(60000, func(i int) string { return fmt.Sprintf("  k%d: 1\n", i) }))},
		// Large files of one token kind.
		{"dashes-one-line", "500,000 \"- \" on one line", "nested more than 64 levels", []byte(hostileHead + "x-a: " + rep("- ", 500_000) + "\n")},
		{"key-lines", "1 MiB of \"a: b\" lines", "a mapping with more than 1000 keys", []byte(rep("a: b\n", 200_000))},
		{"too-large", "a file one byte over 1 MiB", "file is larger than", []byte(hostileHead + "# " + rep("c", MaxFileSize))},
		{"arguments-300k", "a 300 KB string in arguments", "bytes as JSON", []byte(hostileHead + "    arguments: {a: \"" + rep("z", 300_000) + "\"}\n")},
		{"arguments-escapes", "60,000 control characters in arguments (6 bytes each as JSON)", "bytes as JSON",
			[]byte(hostileHead + "    arguments: {a: \"" + rep(`\x01`, 60000) + "\"}\n")},
		{"arguments-many-keys", "10,001 keys in arguments", "more than 10000 values",
			[]byte(hostileHead + "    arguments: {" + list(10001, func(i int) string { return fmt.Sprintf("k%d: 1", i) }) + "}\n")},
		{"directive-flood", "3,000 %TAG directives", "", []byte(rep("%TAG !a! tag:a,2000:\n", 3000) + "---\n" + hostileHead)},
		{"empty-entries", "30,000 empty list entries", "ok", []byte(hostileHead + "x-b:\n" + rep("  -\n", 30000))},
		{"flow-mapping-flood", "20,000 {a: 1} in one list", "more than 100000 YAML tokens", []byte(hostileHead + "x-a: [" + list(20000, func(int) string { return "{a: 1}" }) + "]\n")},
		{"groups-flood", "2,000 groups", "more than", []byte(hostileHead + lines(2000, func(i int) string { return fmt.Sprintf("  - {name: g%d, clients: 1, policy: naive}\n", i) }))},
		{"phases-flood", "2,000 phases", "more than", []byte(strings.Replace(hostileHead, "phases:\n", "phases:\n"+lines(2000, func(i int) string { return fmt.Sprintf("  - {name: p%d, duration: 1s, calls: true}\n", i) }), 1))},
		{"headers-flood", "5,000 keys in one flow mapping", "ok", []byte(hostileHead + "x-h: {" + list(5000, func(i int) string { return fmt.Sprintf("h%d: v", i) }) + "}\n")},
		{"long-anchor-name", "an anchor name of 200 KB", "ok", []byte(hostileHead + "x-a: &" + rep("n", 200_000) + " 1\n")},
		{"long-key", "a 500 KB key", "unknown", []byte(hostileHead + rep("k", 500_000) + ": 1\n")},
		{"long-comment", "a 900 KB comment", "ok", []byte(hostileHead + "# " + rep("c", 900_000) + "\n")},
		{"long-plain-multiline", "a plain scalar over 20,000 lines", "ok", []byte(hostileHead + "description: a\n" + rep("  b\n", 20000))},
		{"many-anchors", "30,000 anchors", "more than 100000 YAML tokens", []byte(hostileHead + "x-a: [" + list(30000, func(i int) string { return fmt.Sprintf("&a%d 1", i) }) + "]\n")},
		{"many-documents", "5,000 empty documents (--- separators)", "more than 16 YAML document markers", []byte(hostileHead + rep("---\n", 5000))},
		{"many-documents-50000", "50,000 empty documents (issue 30: accepted, 14 s)", "more than 16 YAML document markers", []byte(hostileHead + rep("---\n", 50000))},
		{"few-documents", "an empty document either side (--- and ... markers): accepted", "ok", []byte("---\n" + hostileHead + "...\n---\n")},
		{"tag-flood", "20,000 !!str tags", "ok", []byte(hostileHead + "x-a: [" + list(20000, func(int) string { return "!!str 1" }) + "]\n")},
		{"unclosed-quote", "a double quote never closed over 5,000 lines of [", "", []byte(hostileHead + "x-a: \"" + rep(rep("[", 60)+"\n", 5000))},
		{"x-many-keys-20000", "20,000 keys under an x- key", "a mapping with more than 1000 keys",
			[]byte(hostileHead + "x-a:\n" + lines(20000, func(i int) string { return fmt.Sprintf("  k%d: 1\n", i) }))},
		{"x-keys-1000", "1,000 keys under an x- key: accepted", "ok",
			[]byte(hostileHead + "x-a:\n" + lines(1000, func(i int) string { return fmt.Sprintf("  k%d: 1\n", i) }))},
		{"x-sections-30x1000", "30 x- sections of 1,000 keys (90,000 tokens): accepted", "ok",
			[]byte(hostileHead + lines(30, func(j int) string {
				return fmt.Sprintf("x-%d:\n", j) + lines(1000, func(i int) string { return fmt.Sprintf("  k%d: 1\n", i) })
			}))},
		{"flow-keys-40000", "40,000 keys in one flow mapping under x-", "more than 100000 YAML tokens",
			[]byte(hostileHead + "x-h: {" + list(40000, func(i int) string { return fmt.Sprintf("h%d: v", i) }) + "}\n")},
	}
}

func hostileCorpus(t *testing.T) []hostileCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []hostileCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		head := strings.SplitN(string(data), "\n", 3)
		if len(head) < 3 || !strings.HasPrefix(head[0], "# hostile: ") || !strings.HasPrefix(head[1], "# want:") {
			t.Fatalf("%s: the first two lines must say \"# hostile: what\" and \"# want: ...\"", p)
		}
		out = append(out, hostileCase{filepath.Base(p), strings.TrimPrefix(head[0], "# hostile: "),
			strings.TrimSpace(strings.TrimPrefix(head[1], "# want:")), data})
	}
	return append(out, generatedHostile()...)
}

// hostileChildEnv names the file a child process reads (TestHostileWorkloadChild).
const hostileChildEnv = "MCPCHAOS_HOSTILE_WORKLOAD"

// TestHostileWorkloadChild is the process that reads one hostile file: it loads it and prints
// its error, its peak resident memory and its CPU time. It does nothing in a normal test run.
func TestHostileWorkloadChild(t *testing.T) {
	path := os.Getenv(hostileChildEnv)
	if path == "" {
		t.Skip("runs as a child of TestHostileWorkloads")
	}
	_, err := Load(path)
	var ru syscall.Rusage
	if e := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); e != nil {
		t.Fatal(e)
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	line, _ := json.Marshal(map[string]any{"err": msg, "rss": ru.Maxrss << 10, "cpu": cpu})
	fmt.Printf("HOSTILE %s\n", line)
}

func TestHostileWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("reads ~90 files in child processes")
	}
	corpus := hostileCorpus(t)
	if len(corpus) < 80 {
		t.Fatalf("the corpus holds %d files, want at least 80", len(corpus))
	}
	dir := t.TempDir()
	// The race detector multiplies CPU and memory several times; the bounds are for the
	// binary users run, measured without it (docs/reliability.md).
	cpuBound, rssBound := hostileCPU, int64(hostileRSS)
	if raceEnabled {
		cpuBound, rssBound = 10*cpuBound, 4*rssBound
	}
	for _, tc := range corpus {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, strings.TrimSuffix(tc.name, ".yaml")+".yaml")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			res := readHostile(t, path)
			t.Logf("%v CPU, %d MiB resident", res.CPU, res.RSS>>20)
			if res.CPU > cpuBound || res.RSS > rssBound {
				t.Errorf("%s: read in %v CPU with %d MiB resident, want under %v and %d MiB", tc.what, res.CPU, res.RSS>>20, cpuBound, rssBound>>20)
			}
			checkHostileOutcome(t, tc, path, res.Err)
		})
	}
}

type hostileResult struct {
	Err string
	RSS int64
	CPU time.Duration
}

func readHostile(t *testing.T, path string) hostileResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileWorkloadChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), hostileChildEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child process: %v\n%s", err, out.String())
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "HOSTILE "); ok {
			var r hostileResult
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("child process printed no result:\n%s", out.String())
	return hostileResult{}
}

var positioned = regexp.MustCompile(`^(.+):(\d+):(\d+): `)

// checkHostileOutcome checks that a refusal's first line points into the file, at a line that
// exists and a column on it, and says what the case wants.
func checkHostileOutcome(t *testing.T, tc hostileCase, path, msg string) {
	t.Helper()
	if tc.want == "ok" {
		if msg != "" {
			t.Errorf("%s: want accepted, got %s", tc.what, firstLine(msg))
		}
		return
	}
	if msg == "" {
		t.Fatalf("%s: accepted, want refused (%q)", tc.what, tc.want)
	}
	first := firstLine(msg)
	m := positioned.FindStringSubmatch(first)
	if m == nil || m[1] != path {
		t.Fatalf("%s: %q does not start with %s:line:col", tc.what, first, path)
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	fileLines := strings.Split(string(tc.data), "\n")
	if line < 1 || line > len(fileLines) || col < 1 || col > len([]rune(fileLines[line-1]))+1 {
		t.Errorf("%s: %d:%d is not a place in the file (%d lines)", tc.what, line, col, len(fileLines))
	}
	if !strings.Contains(msg, tc.want) {
		t.Errorf("%s: got %q, want it to say %q", tc.what, first, tc.want)
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
