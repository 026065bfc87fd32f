package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// serve-files hands a run's exports out of a place the image cannot copy from: the image has
// no shell and no tar, so `kubectl cp` cannot read the results volume. A pod runs
// `mcpchaos serve-files /results/RUN_ID`, and `kubectl port-forward` plus curl fetch the files.
// Read-only: GET of regular files under DIR, and a listing; nothing else.

func newServeFilesCmd() *cobra.Command {
	var (
		addr   string
		public bool
	)
	cmd := &cobra.Command{
		Use:   "serve-files DIR",
		Short: "Serve a directory of exports read-only over HTTP (to fetch them from a pod)",
		Long: `Serve the regular files under DIR read-only over HTTP, for fetching a run's exports from a
container image that has no shell or tar (see deploy/kubernetes/fetch-pod.yaml):

  GET /        the files under DIR, one relative path a line (for a fetch loop)
  GET /PATH    the file's bytes

It listens on loopback unless --public is given, and stops on Ctrl-C or SIGTERM.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			dir := a[0]
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usagef("%s: not a directory; give the directory holding the exports, e.g. /results/RUN_ID", dir)
			}
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usagef("--addr %q: %v (want HOST:PORT, e.g. 127.0.0.1:8080)", addr, err)
			}
			if ip := net.ParseIP(host); !public && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
				return usagef("--addr %q is not a loopback address; pass --public to listen there", addr)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: filesHandler(os.DirFS(dir)), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.OutOrStdout(), "serving %s read-only on http://%s/; Ctrl-C stops it\n", dir, ln.Addr())
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				srv.Shutdown(ctx)
			}()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address (HOST:PORT)")
	f.BoolVar(&public, "public", false, "allow a non-loopback listen address (in a pod: 0.0.0.0:8080)")
	return cmd
}

// filesHandler serves fsys read-only: "/" lists its regular files, "/PATH" returns one.
// os.DirFS refuses paths that leave the directory ("..") and fs.ValidPath is checked first;
// only regular files are served, so a symlink or a device under DIR is not.
func filesHandler(fsys fs.FS) http.Handler {
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

func listFiles(w http.ResponseWriter, fsys fs.FS) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(path.Base(p), ".") { // .tmp files of a write in progress
			fmt.Fprintln(w, p)
		}
		return nil
	})
}
