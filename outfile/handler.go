package outfile

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Handler serves fsys read-only over HTTP, for fetching a run's files from where they were
// written (`mcpchaos serve-files`): "/" lists its regular files, one relative path a line,
// leaving out the dot files (the temporaries of a write in progress); "/PATH" returns one.
// os.DirFS refuses paths that leave the directory ("..") and fs.ValidPath is checked first;
// only regular files are served, so a symlink or a device under DIR is not.
func Handler(fsys fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET or HEAD", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			listFiles(w, fsys)
			return
		}
		if !fs.ValidPath(name) {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		st, err := fs.Lstat(fsys, name)
		if err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		f, err := fsys.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		rs, ok := f.(io.ReadSeeker)
		if !ok {
			http.Error(w, "not seekable", http.StatusInternalServerError)
			return
		}
		http.ServeContent(w, r, path.Base(name), st.ModTime(), rs)
	})
}

// listFiles writes the regular files under fsys, one relative path a line.
func listFiles(w http.ResponseWriter, fsys fs.FS) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(path.Base(p), ".") { // .tmp files of a write in progress
			fmt.Fprintln(w, p)
		}
		return nil
	})
}
