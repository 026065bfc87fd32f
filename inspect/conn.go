package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/workloads"
)

// Access is how to reach a server as inspect's command line gives it: the TLS trust and the
// extra headers. Its errors name the command's flags.
type Access struct {
	CAFile             string   // PEM certificates to trust (--ca-file)
	InsecureSkipVerify bool     // accept any certificate (--insecure-skip-verify)
	HTTP2              bool     // h2 over TLS, h2c over plain http (--http2)
	Headers            []string // "Name: value" (--header); ${VAR} is taken from the environment
}

// Conn is the connection to the server at u (Options.Conn): the CA file read, the headers
// parsed and expanded from the environment.
func (a Access) Conn(u *url.URL) (wire.Conn, error) {
	c := wire.Conn{URL: u, InsecureSkipVerify: a.InsecureSkipVerify, HTTP2: a.HTTP2}
	if a.CAFile != "" {
		if a.InsecureSkipVerify {
			return c, errors.New("--insecure-skip-verify and --ca-file exclude each other; keep one")
		}
		pool, err := wire.LoadCAFile(a.CAFile)
		if err != nil {
			return c, fmt.Errorf("--ca-file: %v", err)
		}
		c.RootCAs = pool
	}
	t := workloads.Target{URL: u.String()}
	for _, h := range a.Headers {
		hd, err := workloads.ParseHeader(h)
		if err != nil {
			return c, fmt.Errorf("--header: %v", err)
		}
		t.Headers = append(t.Headers, hd)
	}
	hdr, err := t.ExpandHeaders(os.LookupEnv)
	if err != nil {
		return c, err
	}
	c.Header = hdr
	return c, nil
}

// ParseToolArgs reads the arguments of the tool inspect calls (Options.ToolArgs), a JSON
// object given with --tool-args for the tool --tool names; nil for "".
func ParseToolArgs(tool, text string) (map[string]any, error) {
	if text == "" {
		return nil, nil
	}
	if tool == "" {
		return nil, errors.New("--tool-args needs --tool NAME")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil || m == nil {
		return nil, errors.New("--tool-args must be a JSON object, such as '{\"text\":\"hi\"}'")
	}
	return m, nil
}
