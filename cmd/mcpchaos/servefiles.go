package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/outfile"
)

// newServeFilesCmd hands a run's exports out of a place the image cannot copy from: the image
// has no shell and no tar, so `kubectl cp` cannot read the results volume. A pod runs
// `mcpchaos serve-files /results/RUN_ID`, and `kubectl port-forward` plus curl fetch the files
// (outfile.Handler: read-only, GET of regular files under DIR, and a listing; nothing else).
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
			if err := checkListenAddr("--addr", addr, "127.0.0.1:8080", public, "pass --public to listen there"); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: outfile.Handler(os.DirFS(dir)), ReadHeaderTimeout: 10 * time.Second}
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
