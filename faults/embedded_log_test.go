package faults

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// Embedding Toxiproxy leaves the host program's global zerolog logger as it was: a proxy with
// a bandwidth toxic (the toxic that writes through that logger) carries data, is cut and
// closed, and the host's logger still writes where the host pointed it. (It used to be
// replaced by a no-op logger for good.)
func TestEmbeddedLeavesTheGlobalLoggerAlone(t *testing.T) {
	var host bytes.Buffer
	saved := zlog.Logger
	zlog.Logger = zerolog.New(&host)
	t.Cleanup(func() { zlog.Logger = saved })

	addr, _ := echoServer(t)
	e, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	listen, err := e.AddProxy(ctx, "logged", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddToxic(ctx, "logged", Toxic{Name: "slow", Type: "bandwidth", Attributes: map[string]any{"rate": 100}}); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("through the bandwidth toxic\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 28)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("reading the echo through the toxic: %v", err)
	}
	c.Close()
	if err := e.RemoveToxic(ctx, "logged", "slow"); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	zlog.Logger.Warn().Msg("the host's own line")
	if !strings.Contains(host.String(), "the host's own line") {
		t.Errorf("the host's global logger no longer writes to the host's writer: got %q", host.String())
	}
}
