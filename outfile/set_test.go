package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// companions names a set as results.CompanionPaths does: run.json → run.csv, run.junit.xml,
// run.hgrm/.
func companions(export string) Set {
	base := strings.TrimSuffix(export, filepath.Ext(export))
	return Set{Export: export, Files: []string{base + ".csv", base + ".junit.xml"}, Dirs: []string{base + ".hgrm"}, DirExt: ".hgrm"}
}

func TestSetCheckCollisions(t *testing.T) {
	dir := t.TempDir()
	in := func(n string) string { return filepath.Join(dir, n) }
	os.Mkdir(in("foreign.hgrm"), 0o755)
	os.WriteFile(in("foreign.hgrm/notes.txt"), nil, 0o644)
	os.WriteFile(in("plain.hgrm"), nil, 0o644)
	os.Symlink("alias.json", in("alias.csv")) // the CSV companion is a link to the export
	cases := []struct {
		set  Set
		want string
	}{
		{companions(in("r.csv")), "would overwrite the export"},      // the CSV would overwrite the export
		{companions(in("r.hgrm")), "companion directory"},            // the .hgrm directory would replace it
		{companions(in("alias.json")), "would overwrite the export"}, // through a link
		{companions(in("foreign.json")), "not a .hgrm file"},         // a directory the tool did not write
		{companions(in("plain.json")), "not a directory"},            // a file where the directory goes
		{companions(in("x.json.incomplete")), ""},                    // a name is only a name
		{Set{Export: "-", Files: []string{"-.csv"}}, "standard output"},
		{Set{Export: in("m.json"), Files: []string{in("m.json.incomplete")}}, "the same file"},
	}
	for _, c := range cases {
		err := c.set.Check()
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.set.Export, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check = %v, want an error saying %q", c.set.Export, err, c.want)
		}
	}
	if err := companions(in("ok.json")).Check(); err != nil {
		t.Errorf("a plain set: %v", err)
	}
}

// Reusing an export's name never leaves the previous run's companions beside the new ones,
// and a set is marked incomplete until its last file is written.
func TestSetNeverMixesRuns(t *testing.T) {
	dir := t.TempDir()
	export := filepath.Join(dir, "r.json")
	write := func(s Set, hgrms []string, finish bool) {
		t.Helper()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		if err := Write(export, nil, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Files {
			if err := Write(f, nil, []byte("companion")); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range s.Dirs {
			err := ReplaceDir(d, ".hgrm", func(tmp string) error {
				for _, h := range hgrms {
					if err := Write(filepath.Join(tmp, h), nil, []byte(h)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if finish {
			if err := s.Done(); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := companions(export)
	write(first, []string{"a.latency.hgrm", "b.latency.hgrm"}, true)
	second := companions(export)
	write(second, []string{"c.latency.hgrm"}, true)
	names := func(d string) []string {
		entries, _ := os.ReadDir(d)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	if got := names(filepath.Join(dir, "r.hgrm")); strings.Join(got, ",") != "c.latency.hgrm" {
		t.Errorf("r.hgrm holds %v after the second run, want only its own", got)
	}
	if got := names(dir); strings.Join(got, ",") != "r.csv,r.hgrm,r.json,r.junit.xml" {
		t.Errorf("directory: %v", got)
	}
	// A third run asks for no companions: the second's are gone with it.
	third := Set{Export: export, Stale: append(second.Files, second.Dirs...), DirExt: ".hgrm"}
	write(third, nil, true)
	if got := names(dir); strings.Join(got, ",") != "r.json" {
		t.Errorf("after a run without companions: %v", got)
	}
	// A set cut short (Done never called) keeps its marker.
	write(companions(export), []string{"d.latency.hgrm"}, false)
	if _, err := os.Stat(Marker(export)); err != nil {
		t.Errorf("an incomplete set is not marked: %v", err)
	}
	write(companions(export), []string{"d.latency.hgrm"}, true)
	if _, err := os.Stat(Marker(export)); err == nil {
		t.Error("the marker outlived a complete set")
	}
	// --out r.csv --formats none: the export's own name is never removed as a stale companion.
	csvExport := filepath.Join(dir, "r.csv")
	s := Set{Export: csvExport, Stale: []string{csvExport}, DirExt: ".hgrm"}
	s.Begin()
	Write(csvExport, nil, []byte("{}"))
	if err := s.Done(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(csvExport); err != nil {
		t.Errorf("the export was removed as a stale companion: %v", err)
	}
}

// A directory the tool did not fill is never replaced, nor removed as stale.
func TestReplaceDirRefusesForeignDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.hgrm")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o644)
	err := ReplaceDir(dir, ".hgrm", func(string) error { return nil })
	if err == nil {
		t.Fatal("a foreign directory was replaced")
	}
	if err := removeStale(dir, ".hgrm"); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "keep.txt")) != "mine" {
		t.Error("a foreign file was touched")
	}
}
