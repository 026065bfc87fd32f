package fleet

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/clients/wire"
	"github.com/mcpchaos/mcpchaos/refserver"
)

// startTarget runs the reference server on loopback for one test.
func startTarget(t *testing.T, cfg refserver.Config) *refserver.Instance {
	t.Helper()
	inst, err := refserver.Start("127.0.0.1:0", cfg.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst
}

// endpoint reaches url as the fleet's tests do (wire's tests keep the same one).
func endpoint(url string) *wire.Endpoint {
	return &wire.Endpoint{
		URL:            url,
		HTTP:           &http.Client{Transport: wire.Streaming(wire.NewTransport(16))},
		Protocol:       wire.Protocol20251125,
		RequestTimeout: 5 * time.Second,
		MaxBody:        1 << 20,
		MaxEvent:       64 << 10,
		ClientName:     "test",
	}
}
