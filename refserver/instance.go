package refserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Path is where Start serves the MCP endpoint.
const Path = "/mcp"

// Instance is a Server listening on a real address, for `mcpchaos serve`
// and for tests.
type Instance struct {
	URL    string // the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
	Addr   string // the address listened on, e.g. 127.0.0.1:PORT
	Server *Server

	http      *http.Server
	served    chan error
	closeOnce sync.Once
	closeErr  error
}

// Start listens on addr (e.g. "127.0.0.1:0"), serves a Server for cfg at
// Path, and returns once it is listening.
func Start(addr string, cfg Config) (*Instance, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("target: listen on %s: %w", addr, err)
	}
	srv := New(cfg)
	mux := http.NewServeMux()
	mux.Handle(Path, srv)
	inst := &Instance{
		URL:    "http://" + ln.Addr().String() + Path,
		Addr:   ln.Addr().String(),
		Server: srv,
		http:   &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		served: make(chan error, 1),
	}
	go func() { inst.served <- inst.http.Serve(ln) }()
	return inst, nil
}

// shutdownGrace bounds how long Close waits for requests in flight.
const shutdownGrace = 2 * time.Second

// Close ends open streams, then shuts the listener down, waiting at most
// shutdownGrace for requests in flight. It is idempotent.
func (i *Instance) Close() error {
	i.closeOnce.Do(func() {
		i.Server.Close() // streams and slow tools end, so Shutdown need not wait for them
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := i.http.Shutdown(ctx); err != nil {
			i.closeErr = fmt.Errorf("target: shutdown %s: %w", i.Addr, err)
			_ = i.http.Close()
		}
		if err := <-i.served; !errors.Is(err, http.ErrServerClosed) {
			i.closeErr = errors.Join(i.closeErr, fmt.Errorf("target: serve %s: %w", i.Addr, err))
		}
	})
	return i.closeErr
}
