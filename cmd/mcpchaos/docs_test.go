package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/workloads"
)

// The docs' promise: every mcpchaos command in README.md and docs/*.md runs as written. This
// test reads every command the docs show (code blocks, and inline code that starts with
// `mcpchaos ` or a flag) and checks it against the real command tree: the subcommand exists,
// every flag exists and parses, the positional arguments are what the command takes, a
// WORKLOAD is a built-in or a file in the repository (or one of the few names below that
// stand for the reader's own file), and a run command with no shell variables in it turns into
// an engine plan, as `mcpchaos run` would before starting anything.

// userFiles are the names the docs use for files the reader brings: they cannot be in the repo.
// Add a name here only if a reader can tell it is theirs (a doc's example of their own file).
var userFiles = []string{"staging.yaml", "gate.yaml", "staging-ca.pem"}

// placeholder reports whether a word is a placeholder the reader fills in: a shell variable or
// command substitution, or an upper-case name (WORKLOAD, URL, FILE, DIR...).
func placeholder(w string) bool {
	return strings.Contains(w, "$") || regexp.MustCompile(`^[A-Z][A-Z0-9_./-]*(\.\.\.)?$`).MatchString(w)
}

type docCommand struct {
	where    string   // file:line
	words    []string // after `mcpchaos` (or `go run ./cmd/mcpchaos`)
	synopsis bool     // a usage line: [--flag VALUE] brackets, alternatives, placeholders
	inline   bool     // from inline code in prose: may name a command without its arguments
}

func TestDocsCommandsParse(t *testing.T) {
	repo := filepath.Join("..", "..")
	files := []string{filepath.Join(repo, "README.md")}
	more, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found only %v: the test must run from cmd/mcpchaos", files)
	}
	allFlags := map[string]bool{"--help": true, "--version": true}
	for _, c := range commandTree(newRoot()) {
		c.Flags().VisitAll(func(f *pflag.Flag) { allFlags["--"+f.Name] = true })
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { allFlags["--"+f.Name] = true })
	}
	n := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, f)
		cmds, flags := docCommands(rel, string(text))
		for _, fl := range flags {
			if !allFlags[fl.name] {
				t.Errorf("%s: `%s` is not a flag of any mcpchaos command", fl.where, fl.name)
			}
		}
		for _, c := range cmds {
			n++
			if err := checkDocCommand(repo, c); err != "" {
				t.Errorf("%s: mcpchaos %s: %s", c.where, strings.Join(c.words, " "), err)
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d commands in the docs: the extraction is broken", n)
	}
}

func commandTree(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, commandTree(s)...)
	}
	return out
}

type docFlag struct{ where, name string }

var (
	inlineCode = regexp.MustCompile("`([^`]+)`")
	fence      = regexp.MustCompile("^\\s*```")
	usageLine  = regexp.MustCompile(`mcpchaos [^()]*`)
)

// docCommands finds the mcpchaos commands in a markdown text: in fenced and indented code
// blocks (a line, with its `\` continuations, cut into shell commands at `|`, `;`, `&`, `&&`
// and `>`), and in inline code; and the flags that inline code names on their own.
func docCommands(file, text string) ([]docCommand, []docFlag) {
	var cmds []docCommand
	var flags []docFlag
	lines := strings.Split(text, "\n")
	inFence, synopsisBlock := false, false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		where := file + ":" + strconv.Itoa(i+1)
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		code := inFence || strings.HasPrefix(l, "    ")
		if !code {
			synopsisBlock = false
			for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
				span := m[1]
				if strings.HasPrefix(span, "--") {
					name, _, _ := strings.Cut(strings.Fields(span)[0], "=")
					flags = append(flags, docFlag{where, name})
				}
				if words, ok := ourCommand(shellWords(span)); ok {
					cmds = append(cmds, docCommand{where: where, words: words, inline: true, synopsis: strings.Contains(span, "[")})
				}
			}
			continue
		}
		for strings.HasSuffix(strings.TrimSpace(l), `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(strings.TrimSpace(l), `\`) + " " + lines[i]
		}
		if strings.Contains(l, "[-") {
			synopsisBlock = true // the usage lines of docs/commands.md, and the block they are in
		}
		if synopsisBlock {
			// "mcpchaos version   (or mcpchaos --version)" holds two usage lines.
			for _, u := range usageLine.FindAllString(l, -1) {
				if words, ok := ourCommand(strings.Fields(u)); ok {
					cmds = append(cmds, docCommand{where: where, words: words, synopsis: true})
				}
			}
			continue
		}
		for _, seg := range shellCommands(l) {
			if words, ok := ourCommand(seg); ok {
				cmds = append(cmds, docCommand{where: where, words: words})
			}
		}
	}
	return cmds, flags
}

// ourCommand is the words after `mcpchaos` or `go run ./cmd/mcpchaos`, if the command is ours.
func ourCommand(words []string) ([]string, bool) {
	switch {
	case len(words) >= 2 && words[0] == "mcpchaos":
		return words[1:], true
	case len(words) >= 4 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/mcpchaos":
		return words[3:], true
	}
	return nil, false
}

// shellCommands cuts a line of shell into its simple commands' words: quotes are kept
// together (and removed), `$(...)` is one word, a `#` at a word's start ends the line, and a
// redirection drops its target.
func shellCommands(line string) [][]string {
	var out [][]string
	var words []string
	var w strings.Builder
	inWord, skipNext := false, false
	flush := func() {
		if inWord {
			if !skipNext {
				words = append(words, w.String())
			}
			skipNext = false
		}
		w.Reset()
		inWord = false
	}
	end := func() {
		flush()
		if len(words) > 0 {
			out = append(out, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(line); j++ {
				if line[j] == '(' {
					depth++
				} else if line[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			w.WriteString(line[i:min(j+1, len(line))])
			inWord = true
			i = j
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			end()
			return out
		case c == '|' || c == ';' || c == '&':
			end()
		case c == '>' || c == '<':
			flush()
			skipNext, inWord = true, false
			for i+1 < len(line) && line[i+1] == ' ' {
				i++
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	return out
}

func shellWords(s string) []string {
	cmds := shellCommands(s)
	if len(cmds) == 0 {
		return nil
	}
	return cmds[0]
}

// checkDocCommand checks one command against a fresh command tree; "" when it holds.
func checkDocCommand(repo string, dc docCommand) string {
	root := newRoot()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	words := dc.words
	if dc.synopsis {
		return checkSynopsis(root, words)
	}
	var fl runFlags
	root.RemoveCommand(findSub(root, "run"))
	root.AddCommand(runCommand(&fl)) // the same command, its flags where this test reads them
	c, rest, err := root.Find(words)
	if err != nil {
		return err.Error()
	}
	if err := c.ParseFlags(rest); err != nil {
		return err.Error()
	}
	args := c.Flags().Args()
	if c == root {
		if len(args) > 0 {
			return "no such command " + args[0]
		}
		return ""
	}
	if !dc.inline || len(rest) > 0 {
		if err := c.ValidateArgs(args); err != nil {
			return err.Error()
		}
	}
	for _, name := range []string{"ca-file", "tolerances", "from"} {
		if f := c.Flags().Lookup(name); f != nil && f.Changed {
			if msg := checkInputFile(repo, f.Value.String()); msg != "" {
				return "--" + name + " " + msg
			}
		}
	}
	if (c.Name() == "run" || c.Name() == "validate") && len(args) == 1 {
		if msg := checkInputFile(repo, args[0]); msg != "" {
			return "WORKLOAD " + msg
		}
	}
	if c.Name() == "run" && len(args) == 1 && !slices.ContainsFunc(words, placeholder) && !slices.Contains(userFiles, filepath.Base(args[0])) {
		w, err := workloads.Resolve(workloadPath(repo, args[0]))
		if err != nil {
			return err.Error()
		}
		if _, err := fl.plan(w); err != nil {
			return err.Error()
		}
	}
	return ""
}

// workloadPath is a WORKLOAD argument as seen from this test's directory.
func workloadPath(repo, arg string) string {
	if slices.Contains(workloads.BuiltinNames(), arg) {
		return arg
	}
	return filepath.Join(repo, arg)
}

// checkInputFile: a file a command reads is a built-in workload, a file of the repo, a
// placeholder, or one of the reader's own files listed in userFiles.
func checkInputFile(repo, arg string) string {
	if placeholder(arg) || slices.Contains(workloads.BuiltinNames(), arg) || slices.Contains(userFiles, filepath.Base(arg)) {
		return ""
	}
	if _, err := os.Stat(filepath.Join(repo, arg)); err != nil {
		return arg + ": neither a built-in workload nor a file of the repository (nor a reader's file listed in userFiles)"
	}
	return ""
}

// checkSynopsis checks a usage line: the command path exists and every flag it names is one
// of that command's.
func checkSynopsis(root *cobra.Command, words []string) string {
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	c := root
	for len(words) > 0 {
		next := findSub(c, words[0])
		if next == nil {
			break
		}
		c, words = next, words[1:]
	}
	if c == root && len(words) > 0 && !strings.HasPrefix(words[0], "-") && !strings.HasPrefix(words[0], "(") {
		return "no such command " + words[0]
	}
	flagRe := regexp.MustCompile(`(?:^|[\s\[|(])(--?[a-zA-Z][\w-]*)`)
	for _, m := range flagRe.FindAllStringSubmatch(strings.Join(words, " "), -1) {
		name := m[1]
		var f *pflag.Flag
		if strings.HasPrefix(name, "--") {
			f = c.Flags().Lookup(name[2:])
			if f == nil {
				f = c.InheritedFlags().Lookup(name[2:])
			}
		} else if len(name) == 2 {
			f = c.Flags().ShorthandLookup(name[1:])
		} else {
			continue // a value such as -1, or a word in parentheses
		}
		if f == nil {
			return name + " is not a flag of " + c.CommandPath()
		}
	}
	return ""
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || slices.Contains(s.Aliases, name) {
			return s
		}
	}
	return nil
}

// The checker itself: each mistake a doc could make is found.
func TestDocsCheckerFindsMistakes(t *testing.T) {
	const doc = "# x\n\n" +
		"    mcpchaos run seed-incident-fast --no-such-flag\n" +
		"    mcpchaos run big.yaml --shard 0/2\n" +
		"    mcpchaos frobnicate now\n" +
		"    mcpchaos run seed-incident-fast --threshold 'probe.misattributed_errorz == 0'\n" +
		"    mcpchaos compare --last 5 baseline/ current.json --markdwn > compare.md\n" +
		"    mcpchaos run rolling-deploy --procs 2 --shard 0/2\n" +
		"\n```sh\nX=1; go run ./cmd/mcpchaos validate no-such-builtin && echo ok\n```\n\n" +
		"    mcpchaos bench [--sessions 1000] [--no-such-bench-flag]\n" +
		"\nProse naming `--not-a-flag` and `mcpchaos inspect URL --ttl 2x`.\n"
	cmds, flags := docCommands("doc.md", doc)
	if len(flags) != 1 || flags[0].name != "--not-a-flag" {
		t.Errorf("inline flags: got %v", flags)
	}
	if len(cmds) != 9 {
		t.Fatalf("found %d commands, want 9: %+v", len(cmds), cmds)
	}
	for _, c := range cmds {
		if msg := checkDocCommand(filepath.Join("..", ".."), c); msg == "" {
			t.Errorf("%s: mcpchaos %s: passed", c.where, strings.Join(c.words, " "))
		} else {
			t.Logf("%s: %s", c.where, msg)
		}
	}
	// And what is right passes.
	for _, ok := range []string{"mcpchaos run seed-incident-fast --threshold 'probe.misattributed_errors == 0' -o r.json",
		"mcpchaos run staging.yaml --out staging.json", "mcpchaos run bench/workloads/hold-19k.yaml --procs 12"} {
		c := docCommand{where: "ok", words: shellWords(ok)[1:]}
		if msg := checkDocCommand(filepath.Join("..", ".."), c); msg != "" {
			t.Errorf("%s: %s", ok, msg)
		}
	}
}
