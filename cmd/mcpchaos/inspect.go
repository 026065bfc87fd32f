package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/inspect"
	"github.com/mcpchaos/mcpchaos/redact"
	"github.com/mcpchaos/mcpchaos/workloads"
	"github.com/mcpchaos/mcpchaos/workloads/vocab"
)

// inspectHelp is the command's help, beside the function that builds it.
const inspectHelp = `Inspect an MCP server (streamable HTTP) before load-testing it. It opens a few sessions,
kills them (DELETE, and with --ttl by waiting past the declared TTL) and looks at what a dead
session gets: does GET validate the session, does a dead session's cursor still replay (the
seed's trap), which statuses mean "dead", are ping and tools/list valid liveness probes, does an
open stream keep an idle session alive, do idle streams get keepalives.

To get a cursor it uses every means a server offers: the priming event of a streamed reply,
logging/setLevel, and tool calls sent with a progress token (up to three tools from tools/list,
the likeliest to stream first, never one named like delete/remove/drop..., with minimal valid
arguments from the tool's inputSchema; --tool and --tool-args choose one), then the GET stream.
It answers the server's requests (ping, roots/list with no roots; sampling and elicitation
with an error).

It prints a table, and with --json FILE writes the fingerprint as JSON. "unknown" means inspect
could not tell, never "no". The verdict names the hazards and the probe and dead_statuses to
put in a workload. Exit status 0 when it could inspect the server, whatever it found; 1 when it
could not; 2 for bad flags.`

func newInspectCmd() *cobra.Command {
	var (
		jsonOut  string
		o        inspect.Options
		access   inspect.Access
		quiet    bool
		toolArgs string
	)
	cmd := &cobra.Command{
		Use:   "inspect URL",
		Short: "Fingerprint a real MCP server's regime before any load: can its replays lie?",
		Long:  inspectHelp,
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if msg := workloads.CheckURL(a[0]); msg != "" {
				return usagef("URL %s", msg)
			}
			u, _ := url.Parse(a[0])
			var err error
			if o.Conn, err = access.Conn(u); err != nil {
				return &usageError{err}
			}
			if o.ToolArgs, err = inspect.ParseToolArgs(o.Tool, toolArgs); err != nil {
				return &usageError{err}
			}
			if !wire.Supported(o.Protocol) && o.Protocol != wire.ProtocolStateless {
				return usagef("--protocol %q: want a session-family version (%s) or the stateless revision %s", o.Protocol, strings.Join(vocab.Protocols(), ", "), wire.ProtocolStateless)
			}
			if o.TTL < 0 || o.Idle < 0 || o.Timeout < 0 {
				return usagef("--ttl, --idle and --timeout must not be negative")
			}
			if !quiet {
				stderr := cmd.ErrOrStderr()
				o.Progress = func(s string) { fmt.Fprintf(stderr, "inspect: %s\n", s) }
			}
			if err := checkJSONOut(jsonOut); err != nil {
				return err
			}
			fp, err := inspect.Inspect(cmd.Context(), o)
			if err != nil {
				if cmd.Context().Err() != nil {
					return errInterrupted
				}
				var ue *inspect.UnreachableError
				if errors.As(err, &ue) {
					return fmt.Errorf("%s: %w", redact.URL(u), err)
				}
				return err
			}
			return writeFingerprint(cmd, fp, jsonOut)
		},
	}
	f := cmd.Flags()
	f.StringVar(&jsonOut, "json", "", "also write the fingerprint as JSON to this file (- for stdout)")
	f.DurationVar(&o.TTL, "ttl", 0, "the server's session TTL: wait past it to see a TTL death and whether an open stream holds a session")
	f.DurationVar(&o.Idle, "idle", 10*time.Second, "how long to watch an idle GET stream for keepalives")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Second, "timeout of each request")
	f.StringVar(&o.Protocol, "protocol", wire.Protocol20251125, "the protocol version to inspect in: a session-family version, or 2026-07-28 for the stateless revision (the table lists every era the server speaks either way)")
	f.StringVar(&o.Tool, "tool", "", "the tool to call (with a progress token) for event ids; default: up to three picked from tools/list")
	f.StringVar(&toolArgs, "tool-args", "", "the --tool's arguments as a JSON object; default: a minimal valid instance of its inputSchema")
	f.StringArrayVar(&access.Headers, "header", nil, `extra request header "Name: value", repeatable; ${VAR} is taken from the environment`)
	f.StringVar(&access.CAFile, "ca-file", "", "PEM certificates to trust for https")
	f.BoolVar(&access.InsecureSkipVerify, "insecure-skip-verify", false, "accept any certificate (never in production)")
	f.BoolVar(&access.HTTP2, "http2", false, "speak HTTP/2 (h2 over TLS, h2c over plain http)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print no progress lines on stderr")
	return cmd
}

// writeFingerprint prints fp's table and, with --json, writes it as JSON (to stdout alone for
// "-", the table then going to stderr).
func writeFingerprint(cmd *cobra.Command, fp *inspect.Fingerprint, jsonOut string) error {
	table := cmd.OutOrStdout()
	if jsonOut == "-" {
		table = cmd.ErrOrStderr()
	}
	if err := inspect.WriteTable(table, fp); err != nil {
		return err
	}
	if jsonOut == "" {
		return nil
	}
	if err := inspect.WriteJSONFile(jsonOut, fp); err != nil {
		return fmt.Errorf("writing %s: %w", jsonOut, err)
	}
	if jsonOut != "-" {
		fmt.Fprintf(cmd.OutOrStdout(), "fingerprint: %s\n", jsonOut)
	}
	return nil
}
